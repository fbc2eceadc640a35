package dev.fencing.memberlist.state;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;
import java.util.function.IntSupplier;

/**
 * The gossip queue: each broadcast is piggybacked at most {@code RetransmitMult × ceil(log10(N+1))} times, which is
 * enough for epidemic dissemination to reach every member with high probability. Selection prefers the least
 * transmitted, then the largest, then the newest message, so fresh news spreads first and packets are packed full.
 */
public final class TransmitLimitedQueue {
  private static final Comparator<Entry> ORDER =
      Comparator.comparingInt(Entry::transmits)
          .thenComparing(Comparator.comparingInt(Entry::length).reversed())
          .thenComparing(Comparator.comparingLong(Entry::id).reversed());

  private int retransmitMult;
  private final IntSupplier numNodes;
  private final NavigableSet<Entry> queue = new TreeSet<>(ORDER);
  private final Map<String, Entry> byNode = new HashMap<>();
  private long nextId;

  /**
   * @param retransmitMult RetransmitMult
   * @param numNodes the current estimate of the cluster size (including not yet reaped dead nodes)
   */
  public TransmitLimitedQueue(int retransmitMult, IntSupplier numNodes) {
    this.retransmitMult = retransmitMult;
    this.numNodes = numNodes;
  }

  /** Changes RetransmitMult for the broadcasts selected from now on (live timing changes). */
  public void setRetransmitMult(int value) {
    if (value < 1) {
      throw new IllegalArgumentException("retransmitMult must be >= 1, was " + value);
    }
    this.retransmitMult = value;
  }

  /** A queued broadcast; {@code transmits} only changes while the entry is out of the ordered set. */
  private static final class Entry {
    final Broadcast broadcast;
    final int length;
    final long id;
    int transmits;

    Entry(Broadcast broadcast, int length, int transmits, long id) {
      this.broadcast = broadcast;
      this.length = length;
      this.transmits = transmits;
      this.id = id;
    }

    int transmits() {
      return transmits;
    }

    int length() {
      return length;
    }

    long id() {
      return id;
    }

    Broadcast broadcast() {
      return broadcast;
    }
  }

  /** {@code RetransmitMult × ceil(log10(n + 1))}. */
  public static int retransmitLimit(int retransmitMult, int n) {
    return retransmitMult * (int) Math.ceil(Math.log10(n + 1.0));
  }

  /** Queues a broadcast; an older broadcast about the same node is dropped and finished. */
  public void queueBroadcast(Broadcast broadcast) {
    Entry old = byNode.remove(broadcast.node());
    if (old != null) {
      queue.remove(old);
      old.broadcast().finish();
    }
    if (queue.isEmpty()) {
      nextId = 0;
    }
    Entry entry = new Entry(broadcast, broadcast.message().length, 0, nextId++);
    queue.add(entry);
    byNode.put(broadcast.node(), entry);
  }

  /**
   * Picks broadcasts that fit in {@code limit} bytes, counting {@code overhead} bytes of framing per message, and
   * counts one more transmission for each.
   */
  public List<byte[]> getBroadcasts(int overhead, int limit) {
    if (queue.isEmpty()) {
      return List.of();
    }
    int transmitLimit = retransmitLimit(retransmitMult, numNodes.getAsInt());
    int minTransmits = queue.first().transmits();
    int maxTransmits = queue.last().transmits();
    List<byte[]> selected = new ArrayList<>();
    List<Entry> resent = new ArrayList<>();
    int used = 0;
    for (int tier = minTransmits; tier <= maxTransmits; tier++) {
      while (true) {
        int free = limit - used - overhead;
        if (free <= 0) {
          break;
        }
        Entry candidate = queue.ceiling(new Entry(null, free, tier, Long.MAX_VALUE));
        if (candidate == null || candidate.transmits() != tier) {
          break;
        }
        queue.remove(candidate);
        used += candidate.length() + overhead;
        selected.add(candidate.broadcast().message());
        if (candidate.transmits() + 1 >= transmitLimit) {
          byNode.remove(candidate.broadcast().node(), candidate);
          candidate.broadcast().finish();
        } else {
          candidate.transmits++;
          resent.add(candidate);
        }
      }
      if (limit - used - overhead <= 0) {
        break;
      }
    }
    queue.addAll(resent);
    return selected;
  }

  /** Broadcasts waiting to be (re)transmitted. */
  public int numQueued() {
    return queue.size();
  }

  /** Drops every broadcast, finishing each. */
  public void reset() {
    List<Entry> all = new ArrayList<>(queue);
    queue.clear();
    byNode.clear();
    all.forEach(e -> e.broadcast().finish());
  }
}
