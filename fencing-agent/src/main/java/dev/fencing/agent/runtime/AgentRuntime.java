package dev.fencing.agent.runtime;

import dev.fencing.agent.api.EventHub;
import dev.fencing.agent.apiserver.ApiReachableTieBreaker;
import dev.fencing.agent.apiserver.ApiServerEndpoint;
import dev.fencing.agent.apiserver.ReadyzProber;
import dev.fencing.agent.api.LocalApiServer;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.AtomicFileReplacer;
import dev.fencing.agent.config.ExpectedMember;
import dev.fencing.agent.config.StateDirectory;
import dev.fencing.agent.control.ControllerClient;
import dev.fencing.agent.control.ControllerEndpoint;
import dev.fencing.agent.disable.DisableFileWatcher;
import dev.fencing.agent.config.LocalNetworkAddresses;
import dev.fencing.agent.membership.MultiNetworkGossip;
import dev.fencing.agent.metrics.MetricsHttpServer;
import dev.fencing.agent.metrics.ProcessMetrics;
import dev.fencing.agent.quorum.MonotonicClock;
import dev.fencing.agent.quorum.TieBreaker;
import dev.fencing.agent.status.StatusFileWriter;
import dev.fencing.agent.watchdog.WatchdogDevice;
import dev.fencing.memberlist.transport.Transport;
import dev.fencing.probes.EndpointServer;
import dev.fencing.probes.ProbeServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything {@code fencing-agent run} starts, in order, and stops in reverse: the agent core, gossip on memberlist,
 * the local API on its Unix socket, the disable-file watcher, the host status file, {@code /metrics},
 * {@code /healthz} and {@code /readyz}, and the controller client with its reports. Closing it applies the SIGTERM rules of the watchdog.
 */
public final class AgentRuntime implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(AgentRuntime.class);

  /** Longest time between two reports (the controller counts a report older than 30 s as silence). */
  static final Duration REPORT_EVERY = Duration.ofSeconds(10);
  /** Shortest time between two reports that change neither armed, fencing nor the kinds of disarm reason. */
  static final Duration REPORT_MIN_SPACING = Duration.ofMillis(500);
  /** How long a clean stop waits for the controller to acknowledge the final report before closing the stream. */
  static final Duration FINAL_REPORT_TIMEOUT = Duration.ofSeconds(2);

  /**
   * What to start.
   *
   * @param node this node's name
   * @param fileConfig the standalone config, when started with --config
   * @param controller the controller endpoint (address, TLS, token file), when started with --controller
   * @param socket local API socket path
   * @param device the watchdog device
   * @param disableFile the disable file path
   * @param stateDir the state dir
   * @param metricsPort 0 = no metrics server
   * @param bind gossip bind address override (port 0 = the configured port)
   * @param transportWrapper wraps gossip's transport (tests cut nodes off there)
   * @param agentVersion build version
   * @param apiServer the standalone config's API server endpoint for APIReachable (a controller's config replaces it)
   * @param allowPlaintextGossip arm even when the group has no gossip keyring (labs only)
   * @param statusFile the host status file, when kept ({@code --status-file}, empty = off)
   * @param diskRoot where the host's root is mounted: the group's {@code disk.device} is opened under it
   *     ({@code --disk-root}; "/" on the host, "/host" in the DaemonSet, which mounts the host's /dev at /host/dev)
   * @param probePort {@code /healthz} and {@code /readyz} on this port of the loopback address only, for the
   *     kubelet's probes ({@code --probe-port}; 0 = none): with the host's network no pod can hold its request
   *     threads, as it can those of {@code metricsPort}, reachable from the whole network
   */
  public record Options(
      String node,
      Optional<AgentConfig> fileConfig,
      Optional<ControllerEndpoint> controller,
      Path socket,
      WatchdogDevice device,
      Path disableFile,
      Path stateDir,
      int metricsPort,
      Optional<InetSocketAddress> bind,
      Optional<UnaryOperator<Transport>> transportWrapper,
      String agentVersion,
      Optional<ApiServerEndpoint> apiServer,
      boolean allowPlaintextGossip,
      Optional<Path> statusFile,
      Path diskRoot,
      int probePort) {

    /** Without a loopback probe listener. */
    public Options(String node, Optional<AgentConfig> fileConfig, Optional<ControllerEndpoint> controller, Path socket,
        WatchdogDevice device, Path disableFile, Path stateDir, int metricsPort, Optional<InetSocketAddress> bind,
        Optional<UnaryOperator<Transport>> transportWrapper, String agentVersion, Optional<ApiServerEndpoint> apiServer,
        boolean allowPlaintextGossip, Optional<Path> statusFile, Path diskRoot) {
      this(node, fileConfig, controller, socket, device, disableFile, stateDir, metricsPort, bind, transportWrapper,
          agentVersion, apiServer, allowPlaintextGossip, statusFile, diskRoot, 0);
    }

    /** Opening the shared disk at the path the group names (host root "/"). */
    public Options(String node, Optional<AgentConfig> fileConfig, Optional<ControllerEndpoint> controller, Path socket,
        WatchdogDevice device, Path disableFile, Path stateDir, int metricsPort, Optional<InetSocketAddress> bind,
        Optional<UnaryOperator<Transport>> transportWrapper, String agentVersion, Optional<ApiServerEndpoint> apiServer,
        boolean allowPlaintextGossip, Optional<Path> statusFile) {
      this(node, fileConfig, controller, socket, device, disableFile, stateDir, metricsPort, bind, transportWrapper,
          agentVersion, apiServer, allowPlaintextGossip, statusFile, Path.of("/"));
    }

    /**
     * Without a standalone API server endpoint (the controller's, if any, is used), refusing to arm on plaintext
     * gossip.
     */
    public Options(String node, Optional<AgentConfig> fileConfig, Optional<ControllerEndpoint> controller, Path socket,
        WatchdogDevice device, Path disableFile, Path stateDir, int metricsPort, Optional<InetSocketAddress> bind,
        Optional<UnaryOperator<Transport>> transportWrapper, String agentVersion) {
      this(node, fileConfig, controller, socket, device, disableFile, stateDir, metricsPort, bind, transportWrapper,
          agentVersion, Optional.empty(), false, Optional.empty());
    }

    /** Without a standalone API server endpoint (the controller's, if any, is used). */
    public Options(String node, Optional<AgentConfig> fileConfig, Optional<ControllerEndpoint> controller, Path socket,
        WatchdogDevice device, Path disableFile, Path stateDir, int metricsPort, Optional<InetSocketAddress> bind,
        Optional<UnaryOperator<Transport>> transportWrapper, String agentVersion, boolean allowPlaintextGossip) {
      this(node, fileConfig, controller, socket, device, disableFile, stateDir, metricsPort, bind, transportWrapper,
          agentVersion, Optional.empty(), allowPlaintextGossip, Optional.empty());
    }

  }

  /** The group's {@code disk.device} (an absolute host path) under {@code root}, where the host's root is mounted. */
  static Path diskPath(Path root, String device) {
    return root.resolve(device.replaceFirst("^/+", ""));
  }

  private final Options options;
  private final Consumer<String> groupApplied;
  private final List<AutoCloseable> started = new ArrayList<>();
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private FencingAgent agent;
  private Optional<ControllerClient> controllerClient = Optional.empty();
  private ScheduledExecutorService reporter;
  private EndpointServer metrics;
  private EndpointServer probes;
  private LocalApiServer api;

  private AgentRuntime(Options options, Consumer<String> groupApplied) {
    this.options = options;
    this.groupApplied = groupApplied;
  }

  /** Starts everything; on failure stops what was started and rethrows. */
  public static AgentRuntime start(Options options) throws IOException {
    return start(options, group -> { });
  }

  /**
   * Starts everything; on failure stops what was started and rethrows.
   *
   * @param groupApplied told the group of every config the agent takes (file, controller or cache), on the thread
   *                     that hands it over: {@code run} puts it into every log line's {@code group=}
   */
  public static AgentRuntime start(Options options, Consumer<String> groupApplied) throws IOException {
    AgentRuntime runtime = new AgentRuntime(options, groupApplied);
    try {
      runtime.startAll();
      return runtime;
    } catch (IOException | RuntimeException e) {
      runtime.close();
      throw e;
    }
  }

  /**
   * The controller's API server probe for APIReachable. A probe the agent cannot use (e.g. an http:// URL) only
   * leaves APIReachable without an answer: it must never cost the agent the rest of its config.
   */
  private Optional<ApiServerEndpoint> probeEndpoint(dev.fencing.agent.control.ConfigUpdate update) {
    try {
      return ApiServerEndpoint.fromProto(update.config().hasApiServerProbe(), update.config().getApiServerProbe());
    } catch (IllegalArgumentException e) {
      LOG.warn("node={} event=api_server_probe_rejected revision={} reason=\"{}\" effect=\"APIReachable will not"
          + " answer\"", options.node(), update.revision(), e.getMessage());
      return Optional.empty();
    }
  }

  private void startAll() throws IOException {
    MonotonicClock clock = MonotonicClock.system();
    EventHub hub = new EventHub(1024, InstantSource.system());
    hub.bindMetrics(registry);
    ProcessMetrics.bind(registry);
    ReadyzProber prober = new ReadyzProber(clock, "node=" + options.node());
    prober.start();
    started.add(prober);
    options.fileConfig().ifPresent(c -> configureProbe(prober, options.apiServer(), c));
    Optional<ControllerClient> controller = options.controller().map(endpoint -> new ControllerClient(endpoint,
        options.node(), options.agentVersion(), options.stateDir(), update -> {
          try {
            AgentConfig mapped = ControllerConfigMapper.map(update, options.node());
            Optional<String> rejection = agent.rejection(mapped);
            if (rejection.isPresent()) {
              LOG.error("node={} event=config_rejected source={} revision={} reason=\"{}\"", options.node(),
                  update.source(), update.revision(), rejection.get());
              return false;
            }
            configureProbe(prober, probeEndpoint(update), mapped);
            agent.applyConfig(LocalNetworkAddresses.complete(mapped, LocalNetworkAddresses::fromInterfaces));
            groupApplied.accept(mapped.group());
            return true;
          } catch (IllegalArgumentException e) {
            LOG.error("node={} event=config_rejected source={} revision={} reason=\"{}\"", options.node(),
                update.source(), update.revision(), e.getMessage());
            return false;
          }
        }));
    Optional<TieBreaker> controlPlane = controller.map(ControllerClient::controlPlaneTieBreaker);
    GossipFactory gossip = (config, meta) -> {
      if (options.bind().isPresent() && config.policy().networks().multiple()) {
        // Each network's member binds the node's own address inside that network; --bind names one address.
        LOG.warn("node={} event=bind_not_used networks={} msg=\"--bind applies to a group with one network; with"
            + " networks each gossip member binds this node's address inside its network\"", options.node(),
            config.policy().networks().texts());
      }
      return MultiNetworkGossip.create(config, meta, bindAddress(config), network -> options.transportWrapper());
    };
    agent = new FencingAgent(options.node(), new FencingAgent.Dependencies(clock, InstantSource.system(),
        options.device(), gossip, hub, registry, options.agentVersion(), Optional.of(new StateDirectory(
            options.stateDir())), controlPlane, Duration.ofSeconds(5), Duration.ofSeconds(10),
        FatalErrors.haltProcess(), Optional.of(new ApiReachableTieBreaker(prober)), options.allowPlaintextGossip()),
        device -> dev.fencing.agent.disk.DirectBlockDevice.open(diskPath(options.diskRoot(), device)));
    if (options.allowPlaintextGossip()) {
      LOG.warn("node={} event=plaintext_gossip_allowed msg=\"--allow-plaintext-gossip: a group without a keyring"
          + " gossips and exchanges quorum heartbeats unauthenticated; anyone on the network can join or forge"
          + " them. For labs only.\"", options.node());
    }
    agent.start();
    started.add(agent);
    options.fileConfig().ifPresent(config -> {
      agent.applyConfig(LocalNetworkAddresses.complete(config, LocalNetworkAddresses::fromInterfaces));
      groupApplied.accept(config.group());
    });

    api = new LocalApiServer(options.socket(), hub, () -> agent.snapshot().toStatus(clock.nanoTime()));
    api.start();
    started.add(api);

    // One thread for the local files: the disable file's reads (on its directory's inotify events, and a 5 s backstop)
    // and the status file writes are both short and rare.
    ScheduledExecutorService files = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "fencing-local-files");
      t.setDaemon(true);
      return t;
    });
    started.add(files::shutdownNow);
    DisableFileWatcher watcher = new DisableFileWatcher(options.disableFile(),
        state -> agent.setDisabled(state.present() ? Optional.of(state.reason()) : Optional.empty()), files);
    watcher.start();
    started.add(watcher);
    if (options.statusFile().isPresent()) {
      long pid = ProcessHandle.current().pid();
      StatusFileWriter status = new StatusFileWriter(options.statusFile().get(), () -> {
        // Read first: once the loop applied the disable file, no snapshot taken after can be armed by it.
        boolean disabled = agent.disableFileApplied();
        return agent.snapshot().toHostStatus(pid, disabled);
      }, InstantSource.system(), clock, new AtomicFileReplacer(AtomicFileReplacer.Sync.FSYNC),
          "node=" + options.node());
      status.start(files);
      // Changes are written at once: the loop offers its status after every tick (a compare, no wakeup unless it
      // changed), and the writer's own check, when the 4 s refresh falls due, is only the backstop and refresh.
      agent.onTick(s -> status.offer(s.toHostStatus(pid, agent.disableFileApplied())));
      started.add(status);
    }

    if (options.metricsPort() > 0) {
      metrics = MetricsHttpServer.create(options.metricsPort(), registry, () -> agent.health().liveness(),
          () -> agent.health().readiness());
      metrics.start();
      started.add(metrics);
    }
    if (options.probePort() > 0) {
      // 127.0.0.1 itself, as the DaemonSet's probes dial it: getLoopbackAddress() is ::1 on a JVM that prefers IPv6.
      probes = ProbeServer.create(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), options.probePort(),
          () -> agent.health().liveness(), () -> agent.health().readiness());
      probes.start();
      started.add(probes);
    }
    if (controller.isPresent()) {
      ControllerClient client = controller.get();
      client.start();
      started.add(client);
      controllerClient = controller;
      startReports(client, clock);
    }
    LOG.info("node={} event=started socket={} disable_file={} status_file={} state_dir={} metrics_port={}"
        + " probe_port={} controller={} device={}", options.node(), options.socket(), options.disableFile(),
        options.statusFile().map(Path::toString).orElse("off"), options.stateDir(), options.metricsPort(),
        options.probePort(),
        options.controller().map(ControllerEndpoint::target).orElse("none"), options.device().name());
  }

  private void startReports(ControllerClient client, MonotonicClock clock) {
    reporter = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "fencing-reports");
      t.setDaemon(true);
      return t;
    });
    started.add(reporter::shutdownNow);
    ReportScheduler reports = new ReportScheduler(reporter, clock, agent::snapshot,
        s -> client.report(s.toReport(clock.nanoTime())), REPORT_EVERY, REPORT_MIN_SPACING, "node=" + options.node());
    // A disarm or a fence is reported from the tick that made it; other changes within REPORT_MIN_SPACING.
    agent.onTick(reports::onTick);
    reports.start();
  }

  /**
   * The clean stop, in this order: the watchdog's SIGTERM rules (disarm, or close without magic while fencing),
   * then the final report, acknowledged by the controller or {@link #FINAL_REPORT_TIMEOUT} passed, then the
   * controller stream. The other way round the controller would see the stream vanish while the node still looked
   * armed.
   */
  private void stopCleanly() {
    if (agent == null) {
      return;
    }
    if (reporter != null) {
      reporter.shutdownNow();
    }
    AgentSnapshot last = agent.shutdownWatchdog();
    controllerClient.ifPresent(client -> client.finish(last.toReport(MonotonicClock.system().nanoTime()),
        FINAL_REPORT_TIMEOUT));
  }

  /** Probes every heartbeat interval while APIReachable asks; the CA is read here, never on the quorum thread. */
  private static void configureProbe(ReadyzProber prober, Optional<ApiServerEndpoint> endpoint, AgentConfig config) {
    Duration interval = config.policy().timings().heartbeatInterval();
    prober.configure(endpoint, interval, ReadyzProber.timeoutFor(interval));
  }

  private InetSocketAddress bindAddress(AgentConfig config) {
    ExpectedMember self = config.selfMember();
    if (options.bind().isEmpty()) {
      return new InetSocketAddress(self.host(), self.port());
    }
    InetSocketAddress bind = options.bind().get();
    return new InetSocketAddress(bind.getAddress(), bind.getPort() == 0 ? self.port() : bind.getPort());
  }

  /** The agent core (for tests and the benchmark). */
  public FencingAgent agent() {
    return agent;
  }

  /** The metrics server's port, 0 when off. */
  public int metricsPort() {
    return metrics == null ? 0 : metrics.port();
  }

  /** The loopback probe listener's port, 0 when off. */
  public int probePort() {
    return probes == null ? 0 : probes.port();
  }

  /** Stops in reverse order; the agent applies the watchdog's SIGTERM rules. Idempotent. */
  @Override
  public synchronized void close() {
    try {
      stopCleanly();
    } catch (RuntimeException e) {
      LOG.warn("node={} event=final_report_failed error=\"{}\"", options.node(), e.toString());
    }
    for (int i = started.size() - 1; i >= 0; i--) {
      try {
        started.get(i).close();
      } catch (Exception e) {
        LOG.warn("node={} event=stop_failed part={} error=\"{}\"", options.node(),
            started.get(i).getClass().getSimpleName(), e.toString());
      }
    }
    started.clear();
  }
}
