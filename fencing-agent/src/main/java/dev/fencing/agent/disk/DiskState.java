package dev.fencing.agent.disk;

import java.util.Collections;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * What the disk thread publishes after every cycle; the quorum loop and the feed decision only read it.
 *
 * @param lastGoodReadNanos start of the latest successful read of every slot (this node's monotonic clock), empty
 *     before the first
 * @param problem the latest failure, if it is more recent than the latest success
 * @param slot this node's slot, once allocated
 * @param poisonPill "reset from vm": a reset/off/crashdump message is in this node's mailbox (kept, even if the disk
 *     is lost later, until the mailbox reads clear)
 * @param cutOff why this node is the one cut off: a quorum of others write fresh slots, hold quorum and do not hear it
 * @param tie this node's part in an exact-half split
 */
public record DiskState(OptionalLongNanos lastGoodReadNanos, Optional<String> problem, OptionalInt slot,
    Optional<String> poisonPill, Optional<String> cutOff, Tie tie) {

  public DiskState {
    Objects.requireNonNull(lastGoodReadNanos, "lastGoodReadNanos");
    Objects.requireNonNull(problem, "problem");
    Objects.requireNonNull(slot, "slot");
    Objects.requireNonNull(poisonPill, "poisonPill");
    Objects.requireNonNull(cutOff, "cutOff");
    Objects.requireNonNull(tie, "tie");
  }

  /** Nothing read yet. */
  public static DiskState initial() {
    return new DiskState(OptionalLongNanos.NONE, Optional.empty(), OptionalInt.empty(), Optional.empty(),
        Optional.empty(), Tie.IDLE);
  }

  /** A nanosecond instant that may be absent (records cannot hold a primitive OptionalLong comparably). */
  public record OptionalLongNanos(boolean present, long nanos) {
    static final OptionalLongNanos NONE = new OptionalLongNanos(false, 0);

    static OptionalLongNanos of(long nanos) {
      return new OptionalLongNanos(true, nanos);
    }
  }

  /**
   * This node's part in a tie.
   *
   * @param phase idle, claiming, held (won; a lease) or lost
   * @param side the side claimed, held or lost
   * @param validUntilNanos for HELD: the end of the lease on this node's clock
   * @param reason shown in status
   */
  public record Tie(Phase phase, SortedSet<String> side, long validUntilNanos, String reason) {
    static final Tie IDLE = new Tie(Phase.IDLE, new TreeSet<>(), 0, "no tie");

    public Tie {
      side = Collections.unmodifiableSortedSet(new TreeSet<>(side));
      Objects.requireNonNull(phase, "phase");
      Objects.requireNonNull(reason, "reason");
    }
  }

  /** The tie phases. */
  public enum Phase {
    IDLE,
    CLAIMING,
    HELD,
    LOST
  }
}
