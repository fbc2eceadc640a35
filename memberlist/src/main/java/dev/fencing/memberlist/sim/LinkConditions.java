package dev.fencing.memberlist.sim;

import java.time.Duration;

/**
 * One direction of a network path: one-way latency (base plus uniform jitter), packet loss probability, and whether it
 * is cut. A cut applies to packets and streams; loss only to packets (streams are TCP).
 */
public record LinkConditions(long latencyNanos, long jitterNanos, double loss, boolean cut) {
  /** A healthy LAN link: 0.5 ms ± 0.5 ms, no loss. */
  public static final LinkConditions LAN = new LinkConditions(500_000, 500_000, 0.0, false);

  public static LinkConditions of(Duration latency, Duration jitter, double loss) {
    return new LinkConditions(latency.toNanos(), jitter.toNanos(), loss, false);
  }

  public LinkConditions withCut(boolean cut) {
    return new LinkConditions(latencyNanos, jitterNanos, loss, cut);
  }
}
