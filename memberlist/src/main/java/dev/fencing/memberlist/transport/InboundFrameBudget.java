package dev.fencing.memberlist.transport;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/**
 * The bytes of encrypted inbound frames held at once over all inbound streams of a {@link NioTransport}, capped at
 * {@link InboundStreamLimits#maxInboundFrameBytes()}. A frame that does not fit closes the stream that has held its
 * reservation longest (never its own) and waits for that stream's worker to give the room back; it is refused when
 * nothing frees room within the wait. Every holder is still reading or decoding its first message, so, as with
 * stream slots, a host without the key cannot keep the room from a member: it has to keep sending frames faster than
 * a member's arrives. Thread-safe.
 */
final class InboundFrameBudget {
  private final long capacity;
  private final long waitNanos;
  private final LongSupplier nanoTime;
  private final BiConsumer<NioStreamConnection, NioStreamConnection> evict;
  // reservation order: the first entry has held its room longest
  private final Map<NioStreamConnection, Long> holders = new LinkedHashMap<>();
  private long inUse;
  private long peak;

  /**
   * @param capacity bytes held at once
   * @param waitNanos how long a frame waits for room once it has made some
   * @param nanoTime monotonic clock
   * @param evict closes {@code (victim, newcomer)}: the victim's worker then fails its read and releases its room
   */
  InboundFrameBudget(
      long capacity,
      long waitNanos,
      LongSupplier nanoTime,
      BiConsumer<NioStreamConnection, NioStreamConnection> evict) {
    this.capacity = capacity;
    this.waitNanos = waitNanos;
    this.nanoTime = nanoTime;
    this.evict = evict;
  }

  /** Takes {@code bytes} for {@code who}, closing older holders to make room; false if none frees in time. */
  boolean reserve(NioStreamConnection who, int bytes) {
    if (bytes > capacity) {
      return false;
    }
    long deadline = nanoTime.getAsLong() + waitNanos;
    while (true) {
      NioStreamConnection victim;
      synchronized (this) {
        if (inUse + bytes <= capacity) {
          inUse += bytes;
          peak = Math.max(peak, inUse);
          holders.merge(who, (long) bytes, Long::sum);
          return true;
        }
        // streams already closed give their room back as soon as their workers notice: close no more than needed
        victim = inUse - closedHolderBytes() + bytes > capacity ? oldestOpenHolderBut(who) : null;
        if (victim == null) {
          long left = deadline - nanoTime.getAsLong();
          if (left <= 0) {
            return false;
          }
          try {
            wait(Math.max(1, left / 1_000_000));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
          }
          continue;
        }
      }
      // outside the lock: closing touches the transport's own bookkeeping
      evict.accept(victim, who);
    }
  }

  private long closedHolderBytes() {
    long sum = 0;
    for (Map.Entry<NioStreamConnection, Long> e : holders.entrySet()) {
      if (e.getKey().isClosed()) {
        sum += e.getValue();
      }
    }
    return sum;
  }

  private NioStreamConnection oldestOpenHolderBut(NioStreamConnection who) {
    for (NioStreamConnection c : holders.keySet()) {
      if (c != who && !c.isClosed()) {
        return c;
      }
    }
    return null;
  }

  /** Gives back what {@link #reserve} took for {@code who}. */
  synchronized void release(NioStreamConnection who, int bytes) {
    inUse -= bytes;
    holders.computeIfPresent(who, (c, held) -> held - bytes > 0 ? held - bytes : null);
    notifyAll();
  }

  /** Bytes reserved now. */
  synchronized long inUse() {
    return inUse;
  }

  /** The most bytes reserved at once since the transport started. */
  synchronized long peak() {
    return peak;
  }
}
