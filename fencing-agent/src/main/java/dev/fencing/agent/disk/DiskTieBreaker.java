package dev.fencing.agent.disk;

import dev.fencing.agent.quorum.TieBreakVerdict;
import dev.fencing.agent.quorum.TieBreaker;
import java.util.Optional;
import java.util.SortedSet;

/**
 * {@code Disk}: the side that holds the lease on the shared disk wins an exact-half split. Never blocks: it records
 * the request for the disk thread ({@link DiskMonitor#requestTie}) and answers from the latest published state. A
 * WIN is a lease that ends {@link DiskTiming#leaseNanos()} after the start of the latest write that carried it, so a
 * disk thread that stops renewing (hung device) stops the feed by then. A disk read through this host's page cache
 * ({@link DiskMonitor#notCoherentReason()}) gives no answer: both sides could see the other's claim go stale.
 */
public final class DiskTieBreaker implements TieBreaker {

  private final DiskMonitor monitor;

  public DiskTieBreaker(DiskMonitor monitor) {
    this.monitor = monitor;
  }

  @Override
  public String name() {
    return "Disk";
  }

  @Override
  public void prepare(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
    monitor.requestTie(side, nowNanos);
  }

  @Override
  public TieBreakVerdict evaluate(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
    monitor.requestTie(side, nowNanos);
    Optional<String> lost = monitor.lostReason(nowNanos);
    if (lost.isPresent()) {
      return TieBreakVerdict.noAnswer("Disk: unreadable: " + lost.get());
    }
    Optional<String> notCoherent = monitor.notCoherentReason();
    if (notCoherent.isPresent()) {
      return TieBreakVerdict.noAnswer("Disk: not coherent: " + notCoherent.get());
    }
    DiskState.Tie tie = monitor.state().tie();
    if (!tie.side().equals(side)) {
      return TieBreakVerdict.noAnswer("Disk: claiming for side " + side);
    }
    return switch (tie.phase()) {
      case HELD -> nowNanos - tie.validUntilNanos() < 0
          ? TieBreakVerdict.winUntil(tie.reason(), tie.validUntilNanos())
          : TieBreakVerdict.noAnswer("Disk: lease expired (renewal not written)");
      case LOST -> TieBreakVerdict.lose(tie.reason());
      default -> TieBreakVerdict.noAnswer(tie.reason());
    };
  }
}
