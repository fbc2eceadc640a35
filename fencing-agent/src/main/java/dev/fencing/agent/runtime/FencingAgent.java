package dev.fencing.agent.runtime;

import dev.fencing.agent.api.EventHub;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ExpectedMember;
import dev.fencing.agent.config.StateDirectory;
import dev.fencing.agent.membership.ExpectedPeers;
import dev.fencing.agent.membership.GossipListener;
import dev.fencing.agent.membership.GossipMember;
import dev.fencing.agent.membership.GossipMembership;
import dev.fencing.agent.membership.GossipState;
import dev.fencing.agent.membership.MembershipView;
import dev.fencing.agent.membership.NetworkPlan;
import dev.fencing.agent.membership.NodeMeta;
import dev.fencing.agent.metrics.AgentHealth;
import dev.fencing.agent.quorum.Heartbeat;
import dev.fencing.agent.quorum.HeartbeatCodec;
import dev.fencing.agent.quorum.HeartbeatOutcome;
import dev.fencing.agent.quorum.MalformedHeartbeatException;
import dev.fencing.agent.quorum.MonotonicClock;
import dev.fencing.agent.quorum.QuorumEvaluator;
import dev.fencing.agent.quorum.QuorumSettings;
import dev.fencing.agent.quorum.QuorumVerdict;
import dev.fencing.agent.quorum.TieBreaker;
import dev.fencing.agent.disk.DirectBlockDevice;
import dev.fencing.agent.disk.SbdNames;
import dev.fencing.agent.watchdog.ArmingConditions;
import dev.fencing.agent.watchdog.WatchdogDevice;
import dev.fencing.agent.watchdog.WatchdogFeeder;
import dev.fencing.agent.watchdog.WatchdogMetrics;
import dev.fencing.agent.watchdog.WatchdogStatus;
import dev.fencing.agent.watchdog.WatchdogSupervisor;
import dev.fencing.memberlist.limits.DropLog;
import dev.fencing.policy.ResolvedTimings;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running agent: one gossip membership per group, the quorum loop and the watchdog. The quorum thread owns the
 * {@link QuorumEvaluator} and the {@link WatchdogSupervisor} and publishes a "feed until" deadline; the feeder thread
 * ({@link WatchdogFeeder}, nothing else on it) does the keepalives. Nothing on the quorum thread takes the memberlist
 * lock or does network or disk I/O: gossip callbacks only enqueue heartbeats (the loop drains them before judging)
 * and feed the {@link MembershipView}; heartbeats are encoded on the quorum thread and sent by a sender thread (only
 * the latest round waits, so a blocked gossip send never piles up); joins, the member list, metadata updates, leave
 * and the fence record run on separate I/O threads. An {@link Error} in the quorum, feeder or sender thread goes to
 * {@link FatalErrors}: the process ends, and an armed watchdog then resets the node.
 *
 * <p>Each tick: measure how late the tick fired and how long the oldest heartbeat waited, drain the inbox, send a
 * heartbeat round when due (at once after a late tick, so peers' echoes are fresh), evaluate quorum, let the
 * supervisor arm / publish the feed deadline / fence / disarm, announce the isolated flag when it changes, and
 * re-join expected peers gossip does not know.
 */
public final class FencingAgent implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(FencingAgent.class);

  /** Inbound heartbeats kept between ticks; beyond this they are dropped (counted): a flood must not exhaust heap. */
  static final int INBOX_LIMIT = 4096;
  /** File in the state dir recording that this node started fencing itself (read after the reset). */
  static final String FENCE_RECORD = "last-fence";
  private static final java.util.regex.Pattern LEASE_LEFT = java.util.regex.Pattern.compile(", \\d+ms left");

  /** What the agent is built from; only {@code RunCommand} and tests create these. */
  public record Dependencies(
      MonotonicClock clock,
      InstantSource wallClock,
      WatchdogDevice device,
      GossipFactory gossipFactory,
      EventHub hub,
      MeterRegistry registry,
      String agentVersion,
      Optional<StateDirectory> stateDir,
      Optional<TieBreaker> controlPlane,
      Duration rejoinInterval,
      Duration watchdogReopenBackoff,
      FatalErrors.Handler fatalErrors,
      Optional<TieBreaker> apiReachable,
      boolean allowPlaintextGossip) {

    public Dependencies {
      Objects.requireNonNull(clock, "clock");
      Objects.requireNonNull(wallClock, "wallClock");
      Objects.requireNonNull(device, "device");
      Objects.requireNonNull(gossipFactory, "gossipFactory");
      Objects.requireNonNull(hub, "hub");
      Objects.requireNonNull(registry, "registry");
      Objects.requireNonNull(agentVersion, "agentVersion");
      Objects.requireNonNull(stateDir, "stateDir");
      Objects.requireNonNull(controlPlane, "controlPlane");
      Objects.requireNonNull(rejoinInterval, "rejoinInterval");
      Objects.requireNonNull(watchdogReopenBackoff, "watchdogReopenBackoff");
      Objects.requireNonNull(fatalErrors, "fatalErrors");
      Objects.requireNonNull(apiReachable, "apiReachable");
    }

    /**
     * As the canonical constructor; an Error in a loop halts the process ({@link FatalErrors#haltProcess()}), no
     * API server probe runs (APIReachable is then refused) and plaintext gossip is refused.
     */
    public Dependencies(MonotonicClock clock, InstantSource wallClock, WatchdogDevice device,
        GossipFactory gossipFactory, EventHub hub, MeterRegistry registry, String agentVersion,
        Optional<StateDirectory> stateDir, Optional<TieBreaker> controlPlane, Duration rejoinInterval,
        Duration watchdogReopenBackoff) {
      this(clock, wallClock, device, gossipFactory, hub, registry, agentVersion, stateDir, controlPlane,
          rejoinInterval, watchdogReopenBackoff, FatalErrors.haltProcess(), Optional.empty(), false);
    }

    /** As the canonical constructor, halting on an Error and without an API server probe. */
    public Dependencies(MonotonicClock clock, InstantSource wallClock, WatchdogDevice device,
        GossipFactory gossipFactory, EventHub hub, MeterRegistry registry, String agentVersion,
        Optional<StateDirectory> stateDir, Optional<TieBreaker> controlPlane, Duration rejoinInterval,
        Duration watchdogReopenBackoff, boolean allowPlaintextGossip) {
      this(clock, wallClock, device, gossipFactory, hub, registry, agentVersion, stateDir, controlPlane,
          rejoinInterval, watchdogReopenBackoff, FatalErrors.haltProcess(), Optional.empty(), allowPlaintextGossip);
    }
  }

  /** The disarm detail of a group without a gossip keyring. */
  static final String NO_GOSSIP_KEY = "the group has no gossip keyring: gossip and quorum heartbeats are"
      + " unauthenticated; configure keys or start with --allow-plaintext-gossip";

  private record Inbound(Heartbeat heartbeat, String network, long receivedNanos) {}

  /** One encoded heartbeat for one peer, handed from the quorum thread to the sender thread. */
  private record Outbound(String peer, java.net.InetSocketAddress address, byte[] bytes) {}

  private final String node;
  private final Dependencies deps;
  private final long bootId;
  private final ScheduledExecutorService scheduler;
  private final ExecutorService io;
  private final ExecutorService joiner;
  private final ExecutorService sender;
  private final WatchdogFeeder feeder;
  // A scheduled task's Error would vanish into its Future: the tick and the send hand it over explicitly.
  private final Runnable tickTask;
  private final Runnable sendTask;
  private final Thread feederThread;
  private final AtomicBoolean feederStopped = new AtomicBoolean();
  // The latest encoded round not yet taken by the sender thread; a newer round replaces it.
  private final java.util.concurrent.atomic.AtomicReference<List<Outbound>> pendingRound =
      new java.util.concurrent.atomic.AtomicReference<>();
  private final ConcurrentLinkedQueue<Inbound> inbox = new ConcurrentLinkedQueue<>();
  private final AtomicInteger inboxSize = new AtomicInteger();
  private final AtomicBoolean joinInFlight = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Counter heartbeatsSent;
  private final Counter heartbeatsReceived;
  private final Counter heartbeatsConfirmed;
  private final Counter heartbeatsCorrected;
  private final DropLog corrections;
  private final Counter heartbeatsRejected;
  private final Counter heartbeatsDropped;
  private final Counter heartbeatsWrongSource;
  private final Counter unknownMembersDropped;
  private final Counter quorumLosses;
  private final Counter quorumLoopErrors;

  // Written by the scheduler thread only; volatile where gossip threads or gauges read them.
  private volatile AgentConfig config;
  private volatile GossipMembership gossip;
  private volatile MembershipView membershipView;
  // peerViews()'s latest list and what it was built from; quorum thread only.
  private PeerViews peerViews;
  // Where every member gossips on each network; read by gossip threads to tell a heartbeat's network.
  private volatile NetworkPlan plan = NetworkPlan.NONE;
  // The gossip member of the current config, created but possibly not started yet (gossip is set once started).
  private GossipMembership latestGossip;
  private QuorumEvaluator evaluator;
  private WatchdogSupervisor supervisor;
  private Optional<String> disableReason = Optional.empty();
  // Written with disableReason on the quorum thread; read by the status file writer.
  private volatile boolean disableApplied;
  private NodeMeta meta = NodeMeta.EMPTY;
  private long intendedTickNanos;
  private long lastRoundNanos;
  private boolean roundSent;
  private long lastRejoinNanos;
  private boolean gossipStarting;
  private long gossipGeneration;
  // Touched only on the io thread.
  private GossipMembership ioGossip;
  private long lastGossipAttemptNanos;
  private boolean lastHeld;
  private boolean lastFencing;
  private String lastTieOutcome = "none";
  private String lastRawTieOutcome = "none";
  // A config failed while being applied: part of it may be in effect, so the next one is applied in full.
  private boolean configIncomplete;
  // A config for another group that waits until leaving the current one has disarmed the watchdog.
  private AgentConfig nextGroupConfig;

  // Read by any thread.
  private volatile AgentSnapshot snapshot;
  private final MultiGauge peerConfirmed;
  private final List<java.util.function.Consumer<AgentSnapshot>> tickListeners =
      new java.util.concurrent.CopyOnWriteArrayList<>();
  // evaluatorExpected()'s cache, quorum thread only.
  private AgentConfig expectedNamesOf;
  private java.util.SortedSet<String> expectedNames;
  private final AtomicBoolean watchdogShutDown = new AtomicBoolean();
  private final SharedDisk disk;

  /**
   * @param node this node's member name
   * @param deps clocks, device, gossip factory, event hub, metrics
   */
  public FencingAgent(String node, Dependencies deps) {
    this(node, deps, device -> DirectBlockDevice.open(java.nio.file.Path.of(device)));
  }

  /**
   * As {@link #FencingAgent(String, Dependencies)}, opening the shared disk with {@code diskOpener} (tests use a
   * device in memory).
   */
  FencingAgent(String node, Dependencies deps, SharedDisk.Opener diskOpener) {
    this.node = Objects.requireNonNull(node, "node");
    this.disk = new SharedDisk(node, deps.clock(), diskOpener, deps.fatalErrors());
    this.deps = deps;
    this.bootId = Heartbeat.newBootId(new SecureRandom());
    this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "fencing-quorum"));
    this.io = Executors.newSingleThreadExecutor(r -> daemon(r, "fencing-gossip-io"));
    // Joins block up to the TCP timeout per unreachable peer: never let them delay an isolated-flag announcement.
    this.joiner = Executors.newSingleThreadExecutor(r -> daemon(r, "fencing-gossip-join"));
    // Heartbeat sends take memberlist's lock: never on the quorum thread.
    this.sender = Executors.newSingleThreadExecutor(r -> daemon(r, "fencing-heartbeat-send"));
    this.feeder = new WatchdogFeeder(deps.device(), deps.clock(), "node=" + node);
    this.feederThread = daemon(FatalErrors.guarded(deps.fatalErrors(), () -> feeder.run(() -> !feederStopped.get())),
        "fencing-feeder");
    this.supervisor = new WatchdogSupervisor(feeder, deps.watchdogReopenBackoff(), "node=" + node + " group=-");
    // Built once: a lambda captured per tick is a slow allocation through a method handle without C2.
    this.tickTask = FatalErrors.guarded(deps.fatalErrors(), this::tickOnce);
    this.sendTask = FatalErrors.guarded(deps.fatalErrors(), this::sendPendingRound);
    MeterRegistry registry = deps.registry();
    this.heartbeatsSent = Counter.builder("fencing.heartbeats.sent").description("Quorum heartbeats sent")
        .register(registry);
    this.heartbeatsReceived = Counter.builder("fencing.heartbeats.received")
        .description("Quorum heartbeats received and accepted").register(registry);
    this.heartbeatsConfirmed = Counter.builder("fencing.heartbeats.confirmed")
        .description("Heartbeats that completed a round trip").register(registry);
    MonotonicClock monotonic = deps.clock();
    this.corrections = new DropLog(monotonic::nanoTime);
    this.heartbeatsCorrected = Counter.builder("fencing.heartbeats.corrected")
        .description("Heartbeats that completed a round trip and replaced a recorded send time ahead of them, which"
            + " only a forged heartbeat in the peer's name can have put there").register(registry);
    this.heartbeatsRejected = Counter.builder("fencing.heartbeats.rejected")
        .description("Heartbeats dropped: malformed, other group, unknown sender").register(registry);
    this.heartbeatsDropped = Counter.builder("fencing.heartbeats.dropped")
        .description("Heartbeats dropped because the inbox was full (the quorum loop is stalled)").register(registry);
    this.heartbeatsWrongSource = Counter.builder("fencing.heartbeats.wrong.source")
        .description("Heartbeats dropped because they did not come from the configured gossip address of the"
            + " member they name (spoofed sender, unknown sender, wrong address)").register(registry);
    this.unknownMembersDropped = Counter.builder("fencing.gossip.unknown.members.dropped")
        .description("Gossip announcements of nodes that are not expected members at their configured address,"
            + " dropped before the node table and the local API").register(registry);
    this.quorumLosses = Counter.builder("fencing.quorum.losses")
        .description("Transitions from quorum held to quorum lost").register(registry);
    this.quorumLoopErrors = Counter.builder("fencing.quorum.loop.errors")
        .description("RuntimeExceptions caught on the quorum thread (a tick, a config being applied, an update),"
            + " each logged at error: a bug; should stay 0").register(registry);
    this.snapshot = AgentSnapshot.initial(node, deps.agentVersion(), deps.clock().nanoTime(), supervisor.status());
    this.peerConfirmed = MultiGauge.builder("fencing.peer.confirmed")
        .description("1 while this node confirms a heartbeat round trip with the peer within the quorum window")
        .register(registry);
    registerGauges(registry);
  }

  /** Starts the quorum loop; the agent runs disarmed until a config is applied. */
  public void start() {
    readPreviousFence();
    feederThread.start();
    post("start", () -> {
      intendedTickNanos = deps.clock().nanoTime();
      tickOnce();
    });
  }

  /** Applies a new config (file, controller, cache); safe from any thread. */
  public void applyConfig(AgentConfig newConfig) {
    if (!newConfig.self().equals(node)) {
      LOG.error("node={} event=config_rejected reason=\"config is for node {}\"", node, newConfig.self());
      return;
    }
    post("config", () -> reconfigure(newConfig));
  }

  /** The disable file appeared (reason = its first line) or disappeared (empty); safe from any thread. */
  public void setDisabled(Optional<String> reason) {
    post("disable_file", () -> {
      if (!reason.equals(disableReason)) {
        LOG.info("{} event=disable_file present={} reason=\"{}\"", logContext(), reason.isPresent(),
            reason.orElse(""));
      }
      disableReason = reason;
      disableApplied = reason.isPresent();
    });
  }

  /**
   * Runs {@code task} on the quorum thread; after {@link #close()} it is dropped (the agent is stopping). A
   * RuntimeException is logged and counted here: the executor would keep it in a Future nobody reads.
   *
   * @param name what the task does, for the log line
   */
  private void post(String name, Runnable task) {
    Runnable logged = () -> {
      try {
        task.run();
      } catch (RuntimeException e) {
        quorumLoopErrors.increment();
        LOG.error("{} event=quorum_task_failed task={} error=\"{}\"", logContext(), name, e.toString(), e);
      }
    };
    try {
      scheduler.execute(FatalErrors.guarded(deps.fatalErrors(), logged));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      LOG.debug("{} event=update_after_stop_ignored", logContext());
    }
  }

  /** The latest state, for GetStatus, reports, metrics and tests. */
  public AgentSnapshot snapshot() {
    return snapshot;
  }

  /** Healthy while the quorum loop keeps ticking (a stuck loop means feeds stop too); see {@link #health()}. */
  public boolean healthy() {
    return health().liveness().isEmpty();
  }

  /** Liveness and readiness as of now, for {@code /healthz} and {@code /readyz}. */
  public AgentHealth health() {
    AgentSnapshot s = snapshot;
    Duration tick = s.config().map(c -> c.policy().timings().evaluationTick()).orElse(Duration.ofSeconds(1));
    return new AgentHealth(closed.get(), Duration.ofNanos(Math.max(0, deps.clock().nanoTime() - s.takenAtNanos())),
        tick, s.config().isPresent(), s.quorumHeld());
  }

  /**
   * True once the quorum loop has taken the disable file into account (every later tick sees it), false once it has
   * taken its removal into account. Read before {@link #snapshot()}, a true here means no later snapshot can arm.
   */
  public boolean disableFileApplied() {
    return disableApplied;
  }

  /**
   * Adds a listener called on the quorum thread after every tick with the snapshot it published (and after
   * {@link #disableFileApplied()} took that tick's value), in the order added. Must be cheap and must not block: it
   * runs between ticks of the loop that feeds the watchdog. One that throws is logged; the others still run.
   */
  public void onTick(java.util.function.Consumer<AgentSnapshot> listener) {
    tickListeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /**
   * The watchdog's SIGTERM rules, now: feeding ⇒ magic close; starving (fencing in progress) ⇒ close without the
   * magic character so the fence completes (the snapshot then still says armed and fencing). The quorum loop stops
   * changing the watchdog; gossip keeps running until {@link #close()}. Idempotent; waits at most 5 s for the quorum
   * thread.
   *
   * @return the snapshot after the shutdown, for the final report
   */
  public AgentSnapshot shutdownWatchdog() {
    if (watchdogShutDown.compareAndSet(false, true)) {
      try {
        Future<?> shutdown = scheduler.submit(() -> {
          WatchdogStatus status = supervisor.shutdown();
          snapshot = snapshot.withWatchdog(status);
        });
        shutdown.get(5, TimeUnit.SECONDS);
      } catch (Exception e) {
        LOG.error("{} event=shutdown_watchdog_failed error=\"{}\"", logContext(), e.toString());
      }
    }
    return snapshot;
  }

  /**
   * SIGTERM: the watchdog rules of {@link #shutdownWatchdog()} (if not applied yet), then leaves gossip and stops the
   * threads. Idempotent.
   */
  @Override
  public void close() {
    shutdownWatchdog();
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    // Only now: until the supervisor has closed the device, a feed the last verdict allows must still happen.
    feederStopped.set(true);
    feeder.wake();
    scheduler.shutdownNow();
    disk.stop();
    joiner.shutdownNow();
    sender.shutdownNow();
    io.execute(() -> stopIoGossip(Duration.ofSeconds(1)));
    io.shutdown();
    try {
      io.awaitTermination(3, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    io.shutdownNow();
    LOG.info("{} event=stopped", logContext());
  }

  // ---- scheduler thread ------------------------------------------------------------------------------------------

  private void tickOnce() {
    if (closed.get()) {
      return;
    }
    try {
      tick();
    } catch (RuntimeException e) {
      // A bug must not stop the loop silently: log it; feeds stop naturally if this repeats (healthz turns red).
      quorumLoopErrors.increment();
      LOG.error("{} event=tick_failed error=\"{}\"", logContext(), e.toString(), e);
    }
    for (java.util.function.Consumer<AgentSnapshot> listener : tickListeners) {
      try {
        listener.accept(snapshot);
      } catch (RuntimeException e) {
        LOG.warn("{} event=tick_listener_failed error=\"{}\"", logContext(), e.toString());
      }
    }
    long tickNanos = config == null ? 100_000_000L : config.policy().timings().evaluationTick().toNanos();
    long now = deps.clock().nanoTime();
    intendedTickNanos += tickNanos;
    if (intendedTickNanos - now < 0) {
      // Missed ticks are coalesced: the next one runs now and reports how late it is.
      intendedTickNanos = now;
    }
    if (!closed.get()) {
      scheduler.schedule(tickTask, intendedTickNanos - now, TimeUnit.NANOSECONDS);
    }
  }

  private void tick() {
    if (nextGroupConfig != null && !supervisor.status().armed()) {
      // Disarmed in the group this node left (a fence in progress stays armed, so it never gets here).
      AgentConfig next = nextGroupConfig;
      nextGroupConfig = null;
      reconfigure(next);
    }
    long now = deps.clock().nanoTime();
    long late = Math.max(0, now - intendedTickNanos);
    if (config == null || evaluator == null) {
      // Heartbeats before a config cannot be judged: drop them (counted down one by one, adds may race).
      while (inbox.poll() != null) {
        inboxSize.decrementAndGet();
      }
      WatchdogStatus status = supervisor.tick(now, null, ArmingConditions.noConfig());
      snapshot = new AgentSnapshot(node, deps.agentVersion(), now, Optional.empty(), Optional.empty(), status,
          List.of(), late, meta.isolated());
      return;
    }
    ResolvedTimings t = config.policy().timings();
    long tickNanos = t.evaluationTick().toNanos();
    Inbound oldest = inbox.peek();
    long backlog = oldest == null ? 0 : now - oldest.receivedNanos() - tickNanos;
    long lag = Math.max(late, backlog);
    evaluator.observeLocalLag(now, lag);
    drainInbox(now);

    if (!roundSent || now - lastRoundNanos >= t.heartbeatInterval().toNanos()
        || late > t.heartbeatInterval().toNanos() / 2) {
      sendRound(now);
    }
    MembershipView shownMembers = membershipView;
    if (shownMembers != null) {
      shownMembers.expireUnconfirmed(now);
    }
    QuorumVerdict verdict = evaluator.evaluate(now);
    // A fresh reading for the feed decision: time spent since the evaluation must count against heldUntil.
    long feedNow = deps.clock().nanoTime();
    verdict = disk.adjust(freshVerdict(evaluator, verdict, feedNow), feedNow);
    WatchdogStatus status = supervisor.tick(feedNow, verdict, conditions().withPoisonPill(disk.poisonPill()));
    disk.publish(verdict, evaluatorExpected(), config.revision(), heardWithinNanos(t));
    logQuorumTransitions(verdict, status);
    if (status.isolated() != meta.isolated()) {
      announceIsolated(status.isolated());
    }
    if (gossip == null && !gossipStarting && now - lastGossipAttemptNanos >= deps.rejoinInterval().toNanos()) {
      // Gossip could not start (e.g. the port was taken): keep trying; until then no heartbeat leaves this node, so
      // with peers it cannot hold quorum.
      restartGossip(config);
    }
    if (now - lastRejoinNanos >= deps.rejoinInterval().toNanos()) {
      lastRejoinNanos = now;
      rejoinUnknownPeers();
    }
    snapshot = new AgentSnapshot(node, deps.agentVersion(), now, Optional.of(config), Optional.of(verdict), status,
        peerViews(), lag, meta.isolated(), disk.condition(feedNow));
  }

  private java.util.SortedSet<String> evaluatorExpected() {
    // Built once per config, not at every tick.
    if (expectedNamesOf != config) {
      expectedNames = java.util.Collections.unmodifiableSortedSet(
          new TreeSet<>(config.members().stream().map(ExpectedMember::name).toList()));
      expectedNamesOf = config;
    }
    return expectedNames;
  }

  /**
   * A peer counts as heard (cut-off evidence written to the disk) while its latest heartbeat is younger than two
   * heartbeat intervals and a tick, or half the window when that is longer: a lost heartbeat or two is not a cut.
   */
  static long heardWithinNanos(ResolvedTimings t) {
    return Math.max(2 * t.heartbeatInterval().toNanos() + t.evaluationTick().toNanos(),
        t.quorumWindow().toNanos() / 2);
  }

  /** The shared-disk arbiter, when the group has one (tests, metrics). */
  Optional<dev.fencing.agent.disk.DiskMonitor> diskMonitor() {
    return disk.monitor();
  }

  /**
   * The verdict to feed on at {@code feedNow}: {@code verdict} itself, unless it held when evaluated but its
   * {@code heldUntil} passed before {@code feedNow} (a confirmation aged out between the evaluation and the feed
   * decision); then a re-evaluation at {@code feedNow}. Without it, the tick on which a majority lapses into an exact
   * half would start a fence on a verdict already stale, although a fresh evaluation asks the tie-breakers, which may
   * hold (confirmations are our tick times and the window is usually a multiple of the tick, so that lapse falls
   * between evaluation and feed on about every other tick boundary). Safe: the re-evaluation is on the very clock
   * reading the feed decision uses, so nothing is fed on a verdict that did not hold then.
   */
  static QuorumVerdict freshVerdict(QuorumEvaluator evaluator, QuorumVerdict verdict, long feedNow) {
    if (verdict.held() && !verdict.holdsAt(feedNow)) {
      return evaluator.evaluate(feedNow);
    }
    return verdict;
  }

  private void drainInbox(long now) {
    Inbound in;
    while ((in = inbox.poll()) != null) {
      inboxSize.decrementAndGet();
      HeartbeatOutcome outcome = evaluator.onHeartbeat(in.heartbeat(), in.network(), now);
      switch (outcome) {
        case CONFIRMED -> {
          heartbeatsReceived.increment();
          heartbeatsConfirmed.increment();
        }
        case CORRECTED -> {
          heartbeatsReceived.increment();
          heartbeatsConfirmed.increment();
          heartbeatsCorrected.increment();
          warnCorrected(in.heartbeat().sender());
        }
        case HEARD -> heartbeatsReceived.increment();
        default -> {
          heartbeatsRejected.increment();
          LOG.debug("{} event=heartbeat_rejected peer={} outcome={}", logContext(), in.heartbeat().sender(), outcome);
        }
      }
    }
  }

  /** At most one line per {@link DropLog}'s interval: each forged heartbeat can cause one correction. */
  private void warnCorrected(String peer) {
    DropLog.Line line = corrections.dropped();
    if (line != null) {
      LOG.warn("{} event=heartbeat_record_corrected peer={} total={} not_logged={} detail=\"a heartbeat that completed"
          + " a round trip was older than the send time recorded for its sender: only a heartbeat forged in the"
          + " sender's name (a holder of the group key) can have recorded that\"", logContext(), peer, line.total(),
          line.notLogged());
    }
  }

  /** Encodes a round here (the evaluator is this thread's) and hands it to the sender thread. */
  private void sendRound(long now) {
    lastRoundNanos = now;
    roundSent = true;
    if (gossip == null) {
      return;
    }
    List<Outbound> round = new ArrayList<>();
    NetworkPlan networks = plan;
    // Every peer, or in a relayed group (one network, above 16 members) the overlay targets of this round.
    for (String peer : evaluator.heartbeatTargets(now)) {
      // One heartbeat per network the peer is on: each network's round trips are evidence of their own.
      for (String network : networks.networks()) {
        Optional<InetSocketAddress> address = networks.address(peer, network);
        if (address.isPresent()) {
          round.add(new Outbound(peer, address.get(),
              HeartbeatCodec.encode(evaluator.heartbeatFor(peer, network, now))));
        }
      }
    }
    if (pendingRound.getAndSet(round) == null) {
      try {
        sender.execute(sendTask);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        pendingRound.set(null);
      }
    }
  }

  /** On the sender thread: sends the latest round; a round replaced while gossip was blocked is never sent. */
  private void sendPendingRound() {
    List<Outbound> round = pendingRound.getAndSet(null);
    GossipMembership g = gossip;
    if (round == null || g == null) {
      return;
    }
    for (Outbound out : round) {
      try {
        g.sendTo(out.address(), out.bytes());
        heartbeatsSent.increment();
      } catch (RuntimeException e) {
        LOG.debug("{} event=heartbeat_send_failed peer={} error=\"{}\"", logContext(), out.peer(), e.toString());
      }
    }
  }

  private ArmingConditions conditions() {
    ResolvedTimings t = config.policy().timings();
    Optional<String> noGossipKey = config.gossipKeys().isEmpty() && !deps.allowPlaintextGossip()
        ? Optional.of(NO_GOSSIP_KEY) : Optional.empty();
    return new ArmingConditions(true, config.policy().mode(), config.policy().quorumLossAction(),
        t.watchdogTimeout(), t.armingDelay(), t.feedInterval(), config.maintenance(), config.beingRemoved(),
        disableReason, noGossipKey);
  }

  private void logQuorumTransitions(QuorumVerdict verdict, WatchdogStatus status) {
    if (verdict.held() != lastHeld) {
      lastHeld = verdict.held();
      if (!verdict.held()) {
        quorumLosses.increment();
      }
      LOG.info("{} event={} heard={} expected={} quorum_size={} side={} tie_breaker=\"{}\" window_ms={} lag_ms={}",
          logContext(), verdict.held() ? "quorum_held" : "quorum_lost", verdict.heard(), verdict.expected(),
          verdict.quorumSize(), verdict.side(), verdict.tieBreakerOutcome(), verdict.windowNanos() / 1_000_000,
          verdict.localLagNanos() / 1_000_000);
    }
    // A lease's remaining time changes every tick; only a change of the outcome itself is logged.
    // The pattern runs only when the outcome's text changed since the last tick (rare when idle).
    String rawOutcome = verdict.tieBreakerOutcome();
    String tieOutcome = rawOutcome.equals(lastRawTieOutcome) ? lastTieOutcome
        : LEASE_LEFT.matcher(rawOutcome).replaceAll("");
    lastRawTieOutcome = rawOutcome;
    if (!tieOutcome.equals(lastTieOutcome)) {
      lastTieOutcome = tieOutcome;
      LOG.info("{} event=tie_breaker outcome=\"{}\"", logContext(), verdict.tieBreakerOutcome());
    }
    if (status.fencingInProgress() && !lastFencing) {
      lastFencing = true;
      recordFence(verdict);
    }
  }

  private void announceIsolated(boolean isolated) {
    meta = meta.withIsolated(isolated);
    LOG.warn("{} event={} action=Exclude", logContext(), isolated ? "isolated_announced" : "isolated_cleared");
    GossipMembership g = gossip;
    NodeMeta announced = meta;
    if (g != null) {
      io.execute(() -> g.updateMeta(announced, Duration.ofSeconds(1)));
    }
  }

  /** Reading gossip's member list takes memberlist's lock: done with the join, on the joiner thread. */
  private void rejoinUnknownPeers() {
    GossipMembership g = gossip;
    if (g == null || !joinInFlight.compareAndSet(false, true)) {
      return;
    }
    List<ExpectedMember> expected = config.members();
    NetworkPlan networks = plan;
    try {
      joiner.execute(() -> {
        try {
          List<String> addresses = new ArrayList<>();
          // Per network: a member gone from one network's gossip is joined again there.
          for (Map.Entry<String, List<GossipMember>> onNetwork : g.membersByNetwork().entrySet()) {
            Map<String, GossipState> known = new HashMap<>();
            for (GossipMember m : onNetwork.getValue()) {
              known.put(m.name(), m.state());
            }
            for (ExpectedMember m : expected) {
              GossipState state = known.get(m.name());
              Optional<InetSocketAddress> address = networks.address(m.name(), onNetwork.getKey());
              if (!m.name().equals(node) && address.isPresent() && (state == null || state == GossipState.DEAD
                  || state == GossipState.LEFT)) {
                addresses.add(hostPort(address.get()));
              }
            }
          }
          if (!addresses.isEmpty()) {
            int answered = g.join(addresses);
            LOG.debug("{} event=rejoin addresses={} answered={}", logContext(), addresses, answered);
          }
        } catch (RuntimeException e) {
          LOG.debug("{} event=rejoin_failed error=\"{}\"", logContext(), e.toString());
        } finally {
          joinInFlight.set(false);
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      joinInFlight.set(false);
    }
  }

  private static String hostPort(InetSocketAddress address) {
    String host = address.getHostString();
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort();
  }

  /**
   * Whether {@link #applyConfig} would run with this config: the checks the quorum loop makes before it takes a
   * config, made here on the caller's thread (pure: no state changes). The controller client persists only configs
   * that pass, so a config this agent rejects is never the one a restart starts from.
   *
   * @return the reason the config would be rejected, or empty when it would be taken
   */
  public Optional<String> rejection(AgentConfig newConfig) {
    if (!newConfig.self().equals(node)) {
      return Optional.of("config is for node " + newConfig.self());
    }
    if (newConfig.member(node).isEmpty()) {
      return Optional.empty(); // taken: leaving the expected set disarms (see reconfigure)
    }
    try {
      checkedSettings(newConfig);
      return Optional.empty();
    } catch (IllegalArgumentException e) {
      return Optional.of(e.getMessage());
    }
  }

  /**
   * The quorum settings of {@code newConfig}, once checked that this node can run all of it: what would otherwise
   * fail later, with part of the config already in effect, is refused here.
   *
   * @throws IllegalArgumentException with the reason, when this node cannot run {@code newConfig}
   */
  private QuorumSettings checkedSettings(AgentConfig newConfig) {
    QuorumSettings settings = quorumSettings(newConfig);
    if (newConfig.policy().disk().isPresent()) {
      Optional<String> unfit = SbdNames.unfit(node);
      if (unfit.isPresent()) {
        throw new IllegalArgumentException("this node's " + unfit.get() + ", so it cannot use the group's shared"
            + " disk (disk.device " + newConfig.policy().disk().get().device() + "; an SBD slot holds a name of 1..63"
            + " printable ASCII characters): rename the node or remove disk from the group");
      }
    }
    return settings;
  }

  private QuorumSettings quorumSettings(AgentConfig newConfig) {
    ResolvedTimings t = newConfig.policy().timings();
    return new QuorumSettings(node,
        new TreeSet<>(newConfig.members().stream().map(ExpectedMember::name).toList()),
        newConfig.policy().quorumSize(), t.quorumWindow(), t.localHealthCap(), t.evaluationTick(),
        TieBreakers.of(newConfig.policy().tieBreakers(), deps.controlPlane(), deps.apiReachable(),
            newConfig.policy().disk().map(d -> disk.tieBreaker())),
        QuorumSettings.defaultTieBreakLead(t.quorumWindow(), t.heartbeatInterval(), t.evaluationTick()));
  }

  /**
   * Applies {@code newConfig} ({@link #takeConfig}). A RuntimeException there (a bug: what can be refused is refused
   * before anything changes) may leave part of it in effect: it is logged and counted, and the next config is
   * applied in full, so nothing it stored can make the next one look applied already.
   */
  private void reconfigure(AgentConfig newConfig) {
    try {
      takeConfig(newConfig);
    } catch (RuntimeException e) {
      configIncomplete = true;
      quorumLoopErrors.increment();
      LOG.error("{} event=config_apply_failed source={} revision={} error=\"{}\" effect=\"partly applied; the next"
          + " config is applied in full\"", logContext(), newConfig.source(), newConfig.revision(), e.toString(), e);
    }
  }

  private void takeConfig(AgentConfig newConfig) {
    AgentConfig old = config;
    if (newConfig.member(node).isEmpty()) {
      // Leaving the expected set means being removed: disarm, keep gossiping with the last known group meanwhile.
      String reason = "not an expected member of group " + newConfig.group() + " (revision " + newConfig.revision()
          + ")";
      LOG.warn("{} event=not_expected source={} revision={}", logContext(), newConfig.source(),
          newConfig.revision());
      if (old != null) {
        config = old.withBeingRemoved(reason);
      }
      if (nextGroupConfig != null && nextGroupConfig.group().equals(newConfig.group())) {
        nextGroupConfig = null;
      }
      return;
    }
    ResolvedTimings t = newConfig.policy().timings();
    QuorumSettings settings;
    try {
      settings = checkedSettings(newConfig);
    } catch (IllegalArgumentException e) {
      LOG.error("{} event=config_rejected source={} revision={} reason=\"{}\"", logContext(), newConfig.source(),
          newConfig.revision(), e.getMessage());
      return;
    }
    if (old != null && !old.group().equals(newConfig.group()) && supervisor.status().armed()) {
      // Leaving a group means being removed from it: disarm there while its quorum holds (under Fence a lost one
      // refuses the disarm and the fence goes on), and only then take the new group (see tick). Judged at once on a
      // new evaluator without a round trip in the new group, an armed node would fence at the next tick.
      if (nextGroupConfig == null) {
        LOG.warn("{} event=leaving_group to_group={} source={} revision={} msg=\"disarming in this group first (being"
            + " removed); the new group is taken once disarmed\"", logContext(), newConfig.group(),
            newConfig.source(), newConfig.revision());
      }
      nextGroupConfig = newConfig;
      config = old.withBeingRemoved("moving to group " + newConfig.group() + " (revision " + newConfig.revision()
          + ")");
      return;
    }
    nextGroupConfig = null;
    config = newConfig;
    NetworkPlan newPlan = NetworkPlan.of(newConfig);
    newPlan.refused().forEach(r -> LOG.warn("{} event=network_address_refused entry=\"{}\" reason=\"the address is"
        + " not inside its network; no heartbeats go there\"", logContext(), r));
    plan = newPlan;
    if (evaluator == null || !evaluator.group().equals(newConfig.group())) {
      evaluator = new QuorumEvaluator(newConfig.group(), bootId, settings);
    } else {
      evaluator.reconfigure(settings);
    }
    if (newPlan.multiple() || !evaluator.networks().equals(newPlan.networks())) {
      evaluator.useNetworks(newPlan.networks(), newPlan.reachability(), newPlan.networksByMember());
    }
    boolean full = old == null || configIncomplete;
    if (full || !old.group().equals(newConfig.group())) {
      supervisor = rebuildSupervisorIfIdle(newConfig);
    }
    disk.apply(newConfig.policy().disk(), t, logContext());
    meta = new NodeMeta(metaAddresses(newConfig, newPlan), meta.isolated());
    if (newConfig.gossipKeys().isEmpty() && (old == null || !old.gossipKeys().isEmpty())) {
      LOG.warn("{} event=gossip_unencrypted arming_allowed={} msg=\"the group has no gossip keyring: gossip and"
          + " heartbeats are unauthenticated\"", logContext(), deps.allowPlaintextGossip());
    }
    // The membership view knows each member at one address whichever network reports it (one network: its gossip
    // address, as before).
    ExpectedPeers peers = newPlan.canonical();
    if (full || gossipRestartNeeded(old, newConfig) || latestGossip == null) {
      restartGossip(newConfig);
    } else {
      applyToRunningGossip(old, newConfig, peers);
    }
    deps.hub().retainOnly(ExpectedPeers.of(newConfig.members()).names());
    registerPeerGauges(newConfig);
    configIncomplete = false;
    LOG.info("{} event=config_applied source={} revision={} expected={} quorum_size={} mode={} action={}"
        + " profile=\"{}\" t_stop={} safe_to_assume_fenced={}", logContext(), newConfig.source(),
        newConfig.revision(), newConfig.members().size(), newConfig.policy().quorumSize(),
        newConfig.policy().mode().crdValue(), newConfig.policy().quorumLossAction().crdValue(), t.profile(),
        t.tStop(), t.safeToAssumeFencedDelay());
  }

  /**
   * What this node announces in gossip metadata and peers serve to consumers: its configured addresses and, with
   * several networks, its address on each (key = the network's CIDR, value = the IP).
   */
  static java.util.Map<String, String> metaAddresses(AgentConfig config, NetworkPlan plan) {
    java.util.Map<String, String> out = new java.util.TreeMap<>(config.selfMember().addresses());
    if (plan.multiple()) {
      for (String network : plan.networks()) {
        plan.address(config.self(), network).ifPresent(a -> out.put(network, a.getAddress().getHostAddress()));
      }
    }
    return out;
  }

  private WatchdogSupervisor rebuildSupervisorIfIdle(AgentConfig newConfig) {
    if (supervisor.status().armed()) {
      return supervisor;
    }
    return new WatchdogSupervisor(feeder, deps.watchdogReopenBackoff(),
        "node=" + node + " group=" + newConfig.group());
  }

  /**
   * How long members shown before a gossip restart stay shown without the new member reporting them: two push/pull
   * intervals (a full state exchange with a peer) and at least 5 s.
   */
  static Duration restartGrace(ResolvedTimings t) {
    Duration twoExchanges = t.pushPullInterval().multipliedBy(2);
    return twoExchanges.compareTo(Duration.ofSeconds(5)) < 0 ? Duration.ofSeconds(5) : twoExchanges;
  }

  /**
   * Only what memberlist cannot change while running needs a new member (a leave and a rejoin): the group (its
   * gossip label), whether there is a label at all ({@code gossipLabel}), this node's gossip address, and switching
   * between plaintext and encrypted gossip. Timings, keys and the expected set are applied to the running member
   * ({@link #applyToRunningGossip}).
   */
  static boolean gossipRestartNeeded(AgentConfig a, AgentConfig b) {
    return !a.group().equals(b.group())
        || a.policy().gossipLabel() != b.policy().gossipLabel()
        || !a.selfMember().gossipAddress().equals(b.selfMember().gossipAddress())
        || a.gossipKeys().isEmpty() != b.gossipKeys().isEmpty()
        || !selfOnNetworks(a).equals(selfOnNetworks(b));
  }

  /** This node's address on each network: a new network, or a new address on one, needs a new member. */
  private static java.util.Map<String, Optional<InetSocketAddress>> selfOnNetworks(AgentConfig config) {
    NetworkPlan p = NetworkPlan.of(config);
    java.util.Map<String, Optional<InetSocketAddress>> out = new java.util.LinkedHashMap<>();
    p.networks().forEach(n -> out.put(n, p.address(config.self(), n)));
    return out;
  }

  private void applyToRunningGossip(AgentConfig old, AgentConfig newConfig, ExpectedPeers peers) {
    GossipMembership g = latestGossip;
    g.expectMembers(plan);
    MembershipView view = membershipView;
    view.expect(peers);
    if (!sameKeys(old.gossipKeys(), newConfig.gossipKeys())) {
      try {
        g.applyKeys(newConfig.gossipKeys());
        LOG.info("{} event=gossip_keys_applied keys={} keyring_revision={}", logContext(),
            newConfig.gossipKeys().size(), newConfig.keyringRevision());
      } catch (RuntimeException e) {
        LOG.error("{} event=gossip_keys_failed keyring_revision={} error=\"{}\" action=restart_gossip", logContext(),
            newConfig.keyringRevision(), e.getMessage());
        restartGossip(newConfig);
        return;
      }
    }
    ResolvedTimings t = newConfig.policy().timings();
    // memberlist takes its lock to reschedule timers; the quorum thread never waits for that lock.
    io.execute(() -> {
      g.applyTimings(t);
      // A member newly expected may already be in memberlist's table (expected before, or admitted by a push/pull
      // race): show it now rather than at its next change.
      g.members().forEach(view::apply);
    });
  }

  private static boolean sameKeys(List<byte[]> a, List<byte[]> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (!java.util.Arrays.equals(a.get(i), b.get(i))) {
        return false;
      }
    }
    return true;
  }

  private void restartGossip(AgentConfig newConfig) {
    gossip = null;
    gossipStarting = true;
    long generation = ++gossipGeneration;
    lastGossipAttemptNanos = deps.clock().nanoTime();
    MembershipView previousView = membershipView;
    membershipView = new MembershipView(node, deps.hub()::publish, deps.wallClock(), logContext(),
        NetworkPlan.of(newConfig).canonical());
    MembershipView view = membershipView;
    if (previousView != null) {
      // What consumers see stays until the new member confirms or contradicts it (or the grace runs out).
      view.carryOver(previousView, deps.clock().nanoTime() + restartGrace(newConfig.policy().timings()).toNanos());
    }
    GossipMembership created;
    latestGossip = null;
    try {
      created = deps.gossipFactory().create(newConfig, meta);
      latestGossip = created;
    } catch (IOException | RuntimeException e) {
      LOG.error("{} event=gossip_start_failed address={} error=\"{}\" retry_in={}", logContext(),
          newConfig.selfMember().gossipAddress(), e.toString(), deps.rejoinInterval());
      gossipStarting = false;
      return;
    }
    // Starts and stops are serialised on the I/O thread, which alone knows the running member (ioGossip).
    io.execute(() -> {
      stopIoGossip(Duration.ofMillis(500));
      try {
        created.start(new Listener(view));
        ioGossip = created;
        LOG.info("{} event=gossip_started address={} encrypted={}", logContext(),
            newConfig.selfMember().gossipAddress(), !newConfig.gossipKeys().isEmpty());
        if (closed.get()) {
          stopIoGossip(Duration.ZERO);
          return;
        }
        post("gossip_started", () -> {
          if (generation == gossipGeneration) {
            gossip = created;
            gossipStarting = false;
            lastRejoinNanos = deps.clock().nanoTime() - deps.rejoinInterval().toNanos();
          }
        });
      } catch (IOException | RuntimeException e) {
        LOG.error("{} event=gossip_start_failed address={} error=\"{}\" retry_in={}", logContext(),
            newConfig.selfMember().gossipAddress(), e.toString(), deps.rejoinInterval());
        post("gossip_start_failed", () -> {
          if (generation == gossipGeneration) {
            gossipStarting = false;
          }
        });
      }
    });
  }

  /** On the I/O thread: leaves and closes the running gossip member, if any. */
  private void stopIoGossip(Duration leaveTimeout) {
    GossipMembership running = ioGossip;
    ioGossip = null;
    if (running != null) {
      try {
        running.leaveAndClose(leaveTimeout);
      } catch (RuntimeException e) {
        LOG.warn("{} event=gossip_stop_failed error=\"{}\"", logContext(), e.toString());
      }
    }
  }

  /**
   * The peers as the snapshot shows them: the previous tick's list while neither the config nor what gossip reported
   * changed (an idle agent's case), otherwise built anew.
   */
  private List<AgentSnapshot.PeerView> peerViews() {
    AgentConfig c = config;
    MembershipView view = membershipView;
    // Read before the lookups: a change that lands during them moves the count, so the next tick rebuilds.
    long changes = view == null ? -1 : view.changes();
    PeerViews last = peerViews;
    if (last != null && last.config() == c && last.view() == view && last.changes() == changes) {
      return last.list();
    }
    List<AgentSnapshot.PeerView> out = new ArrayList<>();
    for (ExpectedMember m : c.members()) {
      if (m.name().equals(node)) {
        continue;
      }
      Optional<GossipMember> g = view == null ? Optional.empty() : view.member(m.name());
      out.add(new AgentSnapshot.PeerView(m.name(), g.map(GossipMember::state), g.map(x -> x.meta().isolated())
          .orElse(false), g.map(x -> x.meta().addresses()).filter(a -> !a.isEmpty()).orElse(m.addresses())));
    }
    peerViews = new PeerViews(c, view, changes, List.copyOf(out));
    return peerViews.list();
  }

  /** A peer list and the config, membership view and view change count it was built from. */
  private record PeerViews(AgentConfig config, MembershipView view, long changes, List<AgentSnapshot.PeerView> list) {}

  private void recordFence(QuorumVerdict verdict) {
    Optional<StateDirectory> dir = deps.stateDir();
    if (dir.isEmpty()) {
      return;
    }
    String record = "time=" + deps.wallClock().instant() + " node=" + node + " group=" + config.group()
        + " heard=" + verdict.heard() + " expected=" + verdict.expected() + " side=" + verdict.side() + "\n";
    io.execute(() -> {
      try {
        dir.get().write(FENCE_RECORD, record.getBytes(StandardCharsets.UTF_8));
        LOG.info("{} event=fence_recorded file={}", logContext(), dir.get().path().resolve(FENCE_RECORD));
      } catch (IOException e) {
        LOG.warn("{} event=fence_record_failed error=\"{}\"", logContext(), e.toString());
      }
    });
  }

  private void readPreviousFence() {
    deps.stateDir().ifPresent(dir -> {
      try {
        dir.read(FENCE_RECORD).ifPresent(bytes -> LOG.warn("node={} event=previous_run_fenced record=\"{}\"", node,
            new String(bytes, StandardCharsets.UTF_8).trim()));
      } catch (IOException e) {
        LOG.warn("node={} event=state_dir_unreadable dir={} error=\"{}\"", node, dir.path(), e.toString());
      }
    });
  }

  private String logContext() {
    AgentConfig c = config;
    return "node=" + node + " group=" + (c == null ? "-" : c.group());
  }

  /**
   * One {@code fencing_peer_confirmed{peer}} per expected peer (this node excluded): this node's row of the group's
   * heard matrix. Rows follow the config, so a removed member's series goes; at most group size - 1 series.
   */
  private void registerPeerGauges(AgentConfig newConfig) {
    List<MultiGauge.Row<?>> rows = new java.util.ArrayList<>();
    for (ExpectedMember m : newConfig.members()) {
      String peer = m.name();
      if (!peer.equals(node)) {
        rows.add(MultiGauge.Row.of(Tags.of("peer", peer), this, a -> a.confirms(peer) ? 1 : 0));
      }
    }
    peerConfirmed.register(rows, true);
  }

  private boolean confirms(String peer) {
    return snapshot.verdict().map(v -> v.peers().stream().anyMatch(p -> p.confirmed() && p.name().equals(peer)))
        .orElse(false);
  }

  private void registerGauges(MeterRegistry registry) {
    Gauge.builder("fencing.build.info", () -> 1).tags("version", deps.agentVersion(), "component", "agent")
        .description("1, labelled with the agent's build version").register(registry);
    Gauge.builder("fencing.quorum.held", this, a -> a.snapshot.quorumHeld() ? 1 : 0)
        .description("1 while this node holds quorum").register(registry);
    Gauge.builder("fencing.armed", this, a -> a.snapshot.watchdog().armed() ? 1 : 0)
        .description("1 while the watchdog is open (feeding, or starving during a fence)").register(registry);
    Gauge.builder("fencing.in.progress", this, a -> a.snapshot.watchdog().fencingInProgress() ? 1 : 0)
        .description("1 once quorum was lost under Fence: feeding stopped, the watchdog will reset the node")
        .register(registry);
    Gauge.builder("fencing.isolated", this, a -> a.snapshot.isolated() ? 1 : 0)
        .description("1 while this node announces itself isolated (Exclude)").register(registry);
    WatchdogMetrics.register(registry, () -> snapshot.watchdog(), feeder);
    FunctionCounter.builder("fencing.watchdog.feeds", this, a -> a.snapshot.watchdog().feedsTotal())
        .description("Watchdog keepalives (the arming open included)").register(registry);
    // A timestamp rather than an age: Prometheus computes the age at query time (time() - it), so a missed scrape
    // does not freeze it and alerts compare it to the time of evaluation.
    Gauge.builder("fencing.watchdog.last.feed.timestamp.seconds", this, a -> lastFeedEpochSeconds(a.snapshot))
        .description("Unix time of the last watchdog keepalive (NaN before the first)").register(registry);
    // What the feed's age compares with (alert FencingClockOrFeedLag): an override may feed less often than 10 s.
    Gauge.builder("fencing.watchdog.feed.interval.seconds", this, a -> {
      AgentConfig c = a.config;
      return c == null ? Double.NaN : c.policy().timings().feedInterval().toNanos() / 1e9;
    }).description("The group's watchdog feed interval (NaN without a config)").register(registry);
    Gauge.builder("fencing.quorum.heard", this, a -> a.snapshot.verdict().map(QuorumVerdict::heard).orElse(0))
        .description("Members with a confirmed round trip in the window, this node included").register(registry);
    Gauge.builder("fencing.quorum.expected", this, a -> a.snapshot.verdict().map(QuorumVerdict::expected).orElse(0))
        .description("Expected members, this node included").register(registry);
    Gauge.builder("fencing.local.lag.seconds", this, a -> a.snapshot.localLagNanos() / 1e9)
        .description("How late the quorum loop ran (timer lateness or heartbeat backlog)").register(registry);
    Gauge.builder("fencing.heartbeat.inbox.messages", inboxSize, AtomicInteger::get)
        .description("Heartbeats waiting for the quorum loop").register(registry);
    for (GossipState state : GossipState.values()) {
      Gauge.builder("fencing.members", this, a -> {
        MembershipView view = a.membershipView;
        return view == null ? 0 : view.countByState().getOrDefault(state, 0);
      }).tag("state", state.name().toLowerCase(java.util.Locale.ROOT))
          .description("Group members known to gossip, by state").register(registry);
    }
    // The shared disk: NaN without one, so a group without a disk draws no line rather than a false "down".
    Gauge.builder("fencing.disk.up", this, a -> a.disk.monitor()
        .map(m -> m.lostReason(a.deps.clock().nanoTime()).isEmpty() ? 1.0 : 0.0).orElse(Double.NaN))
        .description("1 while the shared disk is read and written within its I/O timeout, 0 while not, NaN without"
            + " a disk").register(registry);
    Gauge.builder("fencing.disk.write.seconds", this, a -> a.disk.monitor()
        .map(m -> m.lastWriteNanos() < 0 ? Double.NaN : m.lastWriteNanos() / 1e9).orElse(Double.NaN))
        .description("Duration of the latest write of this node's slot on the shared disk").register(registry);
    Gauge.builder("fencing.disk.poison.pill", this, a -> a.disk.poisonPill().isPresent() ? 1 : 0)
        .description("1 while a reset/off/crashdump message is in this node's slot on the shared disk")
        .register(registry);
    Gauge.builder("fencing.disk.msgwait.too.short", this, a -> a.disk.msgwaitTooShort())
        .description("1 while the shared disk's SBD msgwait is shorter than this node needs to be reset after a"
            + " poison pill, 0 while not, NaN without a disk or before its header was read").register(registry);
    trafficCounter(registry, "memberlist.packets.sent", "Gossip datagrams sent", g -> g.traffic().packetsSent());
    trafficCounter(registry, "memberlist.packets.received", "Gossip datagrams received",
        g -> g.traffic().packetsReceived());
    trafficCounter(registry, "memberlist.sent.bytes", "Gossip datagram bytes sent", g -> g.traffic().bytesSent());
    trafficCounter(registry, "memberlist.received.bytes", "Gossip datagram bytes received",
        g -> g.traffic().bytesReceived());
  }

  /** The last feed's monotonic time mapped onto the wall clock: now minus how long ago it was. */
  private double lastFeedEpochSeconds(AgentSnapshot s) {
    if (s.watchdog().lastFeedNanos().isEmpty()) {
      return Double.NaN;
    }
    long agoNanos = deps.clock().nanoTime() - s.watchdog().lastFeedNanos().getAsLong();
    return (deps.wallClock().millis() - agoNanos / 1_000_000.0) / 1000.0;
  }

  private void trafficCounter(MeterRegistry registry, String name, String description,
      java.util.function.ToLongFunction<GossipMembership> value) {
    Supplier<Double> read = () -> {
      GossipMembership g = gossip;
      return g == null ? 0.0 : (double) value.applyAsLong(g);
    };
    FunctionCounter.builder(name, read, Supplier::get).description(description).register(registry);
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** Gossip callbacks: heartbeats go to the inbox, member changes to the view. Never throws into gossip. */
  private final class Listener implements GossipListener {
    private final MembershipView view;

    Listener(MembershipView view) {
      this.view = view;
    }

    @Override
    public void onUserMessage(byte[] message, InetSocketAddress from, long receivedNanos) {
      try {
        Optional<Heartbeat> heartbeat = HeartbeatCodec.decode(message);
        if (heartbeat.isEmpty()) {
          return;
        }
        String sender = heartbeat.get().sender();
        Optional<String> network = plan.networkOf(sender, from);
        if (network.isEmpty()) {
          // Only the configured address of the member it names may speak for it (§9): a spoofed name counts nothing.
          heartbeatsWrongSource.increment();
          heartbeatsRejected.increment();
          LOG.debug("{} event=heartbeat_rejected peer={} from={} reason=not_the_configured_address", logContext(),
              sender, from);
          return;
        }
        if (inboxSize.incrementAndGet() > INBOX_LIMIT) {
          inboxSize.decrementAndGet();
          heartbeatsDropped.increment();
          return;
        }
        inbox.add(new Inbound(heartbeat.get(), network.get(), receivedNanos));
      } catch (MalformedHeartbeatException e) {
        heartbeatsRejected.increment();
        LOG.debug("{} event=heartbeat_malformed error=\"{}\"", logContext(), e.getMessage());
      }
    }

    @Override
    public void onMemberChange(GossipMember member) {
      try {
        if (!view.apply(member)) {
          unknownMembersDropped.increment();
        }
      } catch (RuntimeException e) {
        LOG.error("{} event=member_change_failed peer={} error=\"{}\"", logContext(), member.name(), e.toString());
      }
    }

    @Override
    public void onUnexpectedMember(String name, String hostPort) {
      unknownMembersDropped.increment();
      LOG.debug("{} event=unknown_member_dropped peer={} address={}", logContext(), name, hostPort);
    }
  }
}
