package dev.fencing.agent.disk;

import java.time.Duration;

/**
 * The disk arbiter's periods, all derived from the write interval and the I/O timeout.
 *
 * @param interval how often the disk thread reads every slot and writes its own
 * @param ioTimeout a read or write pending longer counts as disk lost
 */
public record DiskTiming(Duration interval, Duration ioTimeout) {

  public DiskTiming {
    if (interval.isNegative() || interval.isZero() || ioTimeout.isNegative() || ioTimeout.isZero()) {
      throw new IllegalArgumentException("disk interval and ioTimeout must be positive");
    }
  }

  /**
   * One cycle per eighth of the tie-break lead (the time between the tie-breakers being prepared and the tie), between
   * 20 ms and 1 s: the side without priority must be able to wait out {@link #claimWaitNanos()} and still answer
   * before the tie is due.
   */
  public static DiskTiming forTieBreakLead(Duration tieBreakLead, Duration ioTimeout) {
    long eighth = tieBreakLead.toMillis() / 8;
    return new DiskTiming(Duration.ofMillis(Math.max(20, Math.min(1000, eighth))), ioTimeout);
  }

  /**
   * A slot whose generation changed within this is fresh: its owner is alive and reaches the disk (at least 500 ms,
   * so a writer delayed by a few cycles still counts).
   */
  public long freshNanos() {
    return Math.max(3 * interval.toNanos(), 500_000_000L);
  }

  /** A tie win lasts this long after the start of the latest write that carried it (renewed by every write). */
  public long leaseNanos() {
    return Math.max(4 * interval.toNanos(), ioTimeout.toNanos());
  }

  /**
   * Another node's claim is ignored only after its generation has not changed for this long: its lease (counted from
   * a write that landed before the read that saw it) has then surely ended on its own clock.
   */
  public long staleNanos() {
    return leaseNanos() + 3 * interval.toNanos();
  }

  /** The prioritised side treats a competing claim as young (it cannot have won yet) if it appeared within this. */
  public long youngNanos() {
    return 4 * interval.toNanos();
  }

  /**
   * The other side waits this long after its claim landed before it may win: more than {@link #youngNanos()}, with
   * room for the two clocks' rates to differ.
   */
  public long claimWaitNanos() {
    return 6 * interval.toNanos();
  }

  /** A tie request not renewed by the quorum loop (every evaluation tick) for this long is dropped. */
  public long requestTtlNanos() {
    return Math.max(4 * interval.toNanos(), 500_000_000L);
  }
}
