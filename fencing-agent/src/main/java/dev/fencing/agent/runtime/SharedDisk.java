package dev.fencing.agent.runtime;

import dev.fencing.agent.disk.BlockDevice;
import dev.fencing.agent.disk.DiskMonitor;
import dev.fencing.agent.disk.DiskTieBreaker;
import dev.fencing.agent.disk.DiskTiming;
import dev.fencing.agent.disk.LocalView;
import dev.fencing.agent.disk.MsgwaitCheck;
import dev.fencing.agent.quorum.MonotonicClock;
import dev.fencing.agent.quorum.PeerQuorumView;
import dev.fencing.agent.quorum.QuorumSettings;
import dev.fencing.agent.quorum.QuorumVerdict;
import dev.fencing.agent.quorum.TieBreakVerdict;
import dev.fencing.agent.quorum.TieBreaker;
import dev.fencing.policy.ResolvedDisk;
import dev.fencing.policy.ResolvedTimings;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared-disk arbiter as the quorum loop sees it: starts the disk thread for the group's {@code disk.device}
 * (another one when the device or its timings change), publishes the loop's view for it, and applies what the disk
 * says to a verdict and to the arming conditions. Everything here only reads the disk thread's published state.
 *
 * <ul>
 *   <li>cut-off evidence (a quorum of others hold quorum without hearing this node) ⇒ quorum not held, at once;
 *   <li>{@code required: true} and the disk lost ⇒ quorum not held (network AND disk); otherwise losing the disk
 *       changes nothing while the network quorum holds;
 *   <li>a poison pill ⇒ {@link #poisonPill()} (the supervisor stops feeding and does not re-arm until cleared);
 *   <li>a header msgwait shorter than this node needs to be reset after a pill ⇒ a warning in the log, the gauge and
 *       the condition, nothing else ({@link MsgwaitCheck}).
 * </ul>
 */
final class SharedDisk {

  private static final Logger LOG = LoggerFactory.getLogger(SharedDisk.class);

  /** Opens the device at a path (O_DIRECT in production, memory in tests). */
  @FunctionalInterface
  interface Opener {
    BlockDevice open(String device) throws IOException;
  }

  private final String node;
  private final MonotonicClock clock;
  private final Opener opener;
  private final FatalErrors.Handler fatalErrors;
  private final DelegatingTieBreaker tieBreaker = new DelegatingTieBreaker();

  // Quorum thread only.
  private Optional<ResolvedDisk> disk = Optional.empty();
  private DiskTiming timing;
  private volatile AtomicBoolean running;
  private volatile DiskMonitor monitor;
  private volatile LocalView view = LocalView.none();

  SharedDisk(String node, MonotonicClock clock, Opener opener, FatalErrors.Handler fatalErrors) {
    this.node = node;
    this.clock = clock;
    this.opener = opener;
    this.fatalErrors = fatalErrors;
  }

  /** The {@code Disk} tie-breaker; answers from whichever disk thread runs (no answer without one). */
  TieBreaker tieBreaker() {
    return tieBreaker;
  }

  /** The running monitor, if the group has a disk. */
  Optional<DiskMonitor> monitor() {
    return Optional.ofNullable(monitor);
  }

  /** Applies a group's disk settings: starts, replaces or stops the disk thread. Quorum thread. */
  synchronized void apply(Optional<ResolvedDisk> newDisk, ResolvedTimings timings, String logContext) {
    DiskTiming newTiming = newDisk.map(d -> DiskTiming.forTieBreakLead(QuorumSettings.defaultTieBreakLead(
        timings.quorumWindow(), timings.heartbeatInterval(), timings.evaluationTick()), d.ioTimeout())).orElse(null);
    // The watchdog timeout, tick and margin may change without the disk's timing: told to the monitor on every path.
    Duration msgwaitNeeded = newTiming == null ? null : MsgwaitCheck.needed(newTiming, timings.evaluationTick(),
        timings.watchdogTimeout(), timings.fenceMargin());
    if (newDisk.map(ResolvedDisk::device).equals(disk.map(ResolvedDisk::device))
        && java.util.Objects.equals(newTiming, timing)) {
      disk = newDisk;
      if (monitor != null && msgwaitNeeded != null) {
        monitor.msgwait().require(msgwaitNeeded);
      }
      return;
    }
    if (newDisk.isPresent() && monitor != null && newDisk.map(ResolvedDisk::device).equals(disk.map(
        ResolvedDisk::device))) {
      // Only the timing changed (under Auto it follows the group size): the running thread takes it over.
      monitor.retime(newTiming);
      monitor.msgwait().require(msgwaitNeeded);
      LOG.info("{} event=disk_arbiter_retimed device={} interval={} io_timeout={} was_interval={} was_io_timeout={}",
          logContext, newDisk.get().device(), newTiming.interval(), newTiming.ioTimeout(),
          timing == null ? null : timing.interval(), timing == null ? null : timing.ioTimeout());
      disk = newDisk;
      timing = newTiming;
      return;
    }
    if (newDisk.isEmpty()) {
      stop();
      disk = newDisk;
      timing = newTiming;
      return;
    }
    String device = newDisk.get().device();
    // Built before anything is stored: a monitor that cannot be built (this node's name does not fit an SBD slot)
    // leaves the settings as they were, so the same settings applied again try again rather than find nothing changed
    // and run without the arbiter.
    DiskMonitor m = new DiskMonitor(() -> opener.open(device), device, node, newTiming, clock, () -> view,
        logContext);
    m.msgwait().require(msgwaitNeeded);
    stop();
    disk = newDisk;
    timing = newTiming;
    AtomicBoolean run = new AtomicBoolean(true);
    Thread t = new Thread(FatalErrors.guarded(fatalErrors, () -> m.run(run::get)), "fencing-disk");
    t.setDaemon(true);
    running = run;
    monitor = m;
    t.start();
    LOG.info("{} event=disk_arbiter_started device={} required={} interval={} io_timeout={}", logContext, device,
        newDisk.get().required(), newTiming.interval(), newTiming.ioTimeout());
  }

  /** Stops the disk thread (a thread blocked in the kernel ends when its I/O returns). */
  synchronized void stop() {
    if (running != null) {
      running.set(false);
      running = null;
    }
    monitor = null;
    // A later disk thread starts from no view, as the first one did, not from one of this disk's last tick.
    view = LocalView.none();
  }

  /**
   * Publishes the loop's latest view for the disk thread to write; nothing to do (and nothing built) without one.
   *
   * @param heardWithinNanos a peer counts as heard when its latest heartbeat is at most this old
   */
  void publish(QuorumVerdict verdict, SortedSet<String> expected, long revision, long heardWithinNanos) {
    if (monitor == null) {
      return;
    }
    SortedSet<String> heard = new TreeSet<>();
    heard.add(node);
    for (PeerQuorumView p : verdict.peers()) {
      if (p.sinceLastHeardNanos().isPresent() && p.sinceLastHeardNanos().getAsLong() <= heardWithinNanos) {
        heard.add(p.name());
      }
    }
    view = new LocalView(expected, verdict.quorumSize(), verdict.held(), revision, verdict.side(), heard);
  }

  /** The verdict after what the disk says (cut-off evidence; {@code required} and the disk lost). */
  QuorumVerdict adjust(QuorumVerdict verdict, long nowNanos) {
    DiskMonitor m = monitor;
    if (m == null || !verdict.held()) {
      return verdict;
    }
    Optional<String> cutOff = m.cutOff(nowNanos);
    if (cutOff.isPresent()) {
      return notHeld(verdict, "disk: cut off: " + cutOff.get());
    }
    Optional<String> lost = m.lostReason(nowNanos);
    if (lost.isPresent() && disk.map(ResolvedDisk::required).orElse(false)) {
      return notHeld(verdict, "disk required but unreadable: " + lost.get());
    }
    return verdict;
  }

  /** The poison pill in this node's mailbox, if any ("reset from vm"). */
  Optional<String> poisonPill() {
    DiskMonitor m = monitor;
    return m == null ? Optional.empty() : m.state().poisonPill();
  }

  /**
   * 1 while the disk's msgwait is shorter than this node needs to be reset after a poison pill, 0 while not, NaN
   * without a disk or before its header was read.
   */
  double msgwaitTooShort() {
    DiskMonitor m = monitor;
    return m == null ? Double.NaN : m.msgwait().tooShort();
  }

  /**
   * "none" without a disk, else the monitor's condition ("ok", "ok, but msgwait …", "allocating a slot",
   * "unreadable: …", "poison pill: …").
   */
  String condition(long nowNanos) {
    DiskMonitor m = monitor;
    return m == null ? "none" : m.condition(nowNanos);
  }

  private static QuorumVerdict notHeld(QuorumVerdict v, String why) {
    return new QuorumVerdict(false, v.evaluatedAtNanos(), v.evaluatedAtNanos(), v.expected(), v.heard(),
        v.quorumSize(), v.side(), why, v.windowNanos(), v.localLagNanos(), v.peers());
  }

  /** The tie-breaker the evaluator holds; the disk thread behind it may change with the config. */
  private final class DelegatingTieBreaker implements TieBreaker {
    @Override
    public String name() {
      return "Disk";
    }

    @Override
    public void prepare(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
      DiskMonitor m = monitor;
      if (m != null) {
        new DiskTieBreaker(m).prepare(side, expected, nowNanos);
      }
    }

    @Override
    public TieBreakVerdict evaluate(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
      DiskMonitor m = monitor;
      return m == null ? TieBreakVerdict.noAnswer("Disk: no disk configured")
          : new DiskTieBreaker(m).evaluate(side, expected, nowNanos);
    }
  }
}
