package dev.fencing.agent.runtime;

import dev.fencing.agent.quorum.MonotonicClock;
import dev.fencing.proto.fencing.v1.DisarmReason;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When the agent sends an AgentReport, and on which thread. A report goes out
 * <ul>
 *   <li>at once when armed, fencing or the kinds of the disarm reasons change: a disarm or a fence reaches the
 *       controller from the tick that made it;</li>
 *   <li>when anything else the controller acts on changes (quorum, isolated, the reasons' details, the confirmed
 *       side, the config revision, the watchdog condition), but at most once per {@code minSpacing};</li>
 *   <li>and at least every {@code every}, so the controller's last-contact estimates stay fresh — also while the
 *       quorum loop is stuck (the report then shows the feed and the confirmations ageing).</li>
 * </ul>
 *
 * <p>The quorum loop calls {@link #onTick} after every tick: a compare with the previous tick's key, and a wakeup of
 * the sender only when something changed. The sender's own timer runs once per {@code every} (and once per
 * {@code minSpacing} while a change waits), so an idle agent's sender wakes once every ten seconds instead of twice a
 * second. Everything but {@link #onTick} runs on {@code executor}'s single thread.
 */
final class ReportScheduler {

  private static final Logger LOG = LoggerFactory.getLogger(ReportScheduler.class);

  /** What the controller acts on; equality written out (no generated record equals: this runs every tick). */
  static final class Key {
    private final boolean armed;
    private final boolean fencing;
    private final List<DisarmReason> reasons;
    private final boolean held;
    private final boolean isolated;
    private final Object confirmed;
    private final long revision;
    private final String condition;

    private Key(AgentSnapshot s) {
      this.armed = s.watchdog().armed();
      this.fencing = s.watchdog().fencingInProgress();
      this.reasons = s.watchdog().disarmReasons();
      this.held = s.quorumHeld();
      this.isolated = s.isolated();
      this.confirmed = s.verdict().isPresent() ? s.verdict().get().side() : null;
      this.revision = s.config().isPresent() ? s.config().get().revision() : -1L;
      this.condition = s.watchdog().condition();
    }

    static Key of(AgentSnapshot s) {
      return new Key(s);
    }

    /** Same armed, fencing and disarm reason kinds (details aside: the arming delay's changes every tick). */
    boolean sameUrgent(Key o) {
      if (armed != o.armed || fencing != o.fencing || reasons.size() != o.reasons.size()) {
        return false;
      }
      for (int i = 0; i < reasons.size(); i++) {
        if (reasons.get(i).getKind() != o.reasons.get(i).getKind()) {
          return false;
        }
      }
      return true;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Key o && sameUrgent(o) && held == o.held && isolated == o.isolated
          && revision == o.revision && Objects.equals(condition, o.condition) && reasons.equals(o.reasons)
          && Objects.equals(confirmed, o.confirmed);
    }

    @Override
    public int hashCode() {
      return Objects.hash(armed, fencing, reasons, held, isolated, confirmed, revision, condition);
    }
  }

  private final ScheduledExecutorService executor;
  private final MonotonicClock clock;
  private final Supplier<AgentSnapshot> source;
  private final Consumer<AgentSnapshot> send;
  private final long everyNanos;
  private final long minSpacingNanos;
  private final String logContext;

  // Quorum thread only.
  private Key lastTicked;

  // Executor thread only.
  private Key lastSent;
  private long lastSentNanos;
  private ScheduledFuture<?> refresh;
  private ScheduledFuture<?> deferred;
  private long sent;

  /**
   * @param executor a single-threaded scheduler this object uses and the caller owns
   * @param clock the agent's monotonic clock
   * @param source the agent's latest snapshot, read when a report is decided (not the tick's)
   * @param send hands a snapshot to the controller client; a RuntimeException is logged and the next change or
   *     refresh tries again
   * @param every longest time between two reports
   * @param minSpacing shortest time between two reports that carry no armed, fencing or reason-kind change
   * @param logContext {@code node=…} prefix for log lines
   */
  ReportScheduler(ScheduledExecutorService executor, MonotonicClock clock, Supplier<AgentSnapshot> source,
      Consumer<AgentSnapshot> send, Duration every, Duration minSpacing, String logContext) {
    this.executor = Objects.requireNonNull(executor, "executor");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.source = Objects.requireNonNull(source, "source");
    this.send = Objects.requireNonNull(send, "send");
    this.everyNanos = every.toNanos();
    this.minSpacingNanos = minSpacing.toNanos();
    this.logContext = Objects.requireNonNull(logContext, "logContext");
    if (everyNanos <= 0 || minSpacingNanos <= 0 || minSpacingNanos > everyNanos) {
      throw new IllegalArgumentException("report intervals must be positive with minSpacing <= every, got every="
          + every + " minSpacing=" + minSpacing);
    }
  }

  /** Sends the first report as soon as the executor runs it; from then on the refresh keeps itself going. */
  void start() {
    submit();
  }

  /**
   * Quorum thread, after every tick: wakes the sender when the snapshot's key differs from the previous tick's.
   * Never blocks and never throws.
   */
  void onTick(AgentSnapshot snapshot) {
    Key key = Key.of(snapshot);
    if (key.equals(lastTicked)) {
      return;
    }
    lastTicked = key;
    submit();
  }

  /** Reports sent since start (the executor's view). */
  long sent() {
    return sent;
  }

  private void submit() {
    try {
      executor.execute(() -> consider(false));
    } catch (RejectedExecutionException e) {
      LOG.debug("{} event=report_after_stop_ignored", logContext);
    }
  }

  private void consider(boolean refreshDue) {
    try {
      long now = clock.nanoTime();
      AgentSnapshot s = source.get();
      Key key = Key.of(s);
      boolean first = lastSent == null;
      boolean due = refreshDue || first || now - lastSentNanos >= everyNanos;
      if (!due && key.equals(lastSent)) {
        return;
      }
      if (!due && key.sameUrgent(lastSent) && now - lastSentNanos < minSpacingNanos) {
        // A change the controller may learn a little later: one report when the spacing allows, with the then
        // latest snapshot.
        if (deferred == null || deferred.isDone()) {
          deferred = executor.schedule(() -> consider(false), lastSentNanos + minSpacingNanos - now,
              TimeUnit.NANOSECONDS);
        }
        return;
      }
      lastSent = key;
      lastSentNanos = now;
      if (refresh != null) {
        refresh.cancel(false);
      }
      refresh = executor.schedule(() -> consider(true), everyNanos, TimeUnit.NANOSECONDS);
      sent++;
      send.accept(s);
    } catch (RejectedExecutionException e) {
      LOG.debug("{} event=report_after_stop_ignored", logContext);
    } catch (RuntimeException e) {
      LOG.warn("{} event=report_failed error=\"{}\"", logContext, e.toString());
    }
  }
}
