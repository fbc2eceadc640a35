package dev.fencing.agent.runtime;

import dev.fencing.agent.api.EventHub;
import dev.fencing.agent.api.LocalApiServer;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ExpectedMember;
import dev.fencing.agent.config.StateDirectory;
import dev.fencing.agent.control.ControllerClient;
import dev.fencing.agent.control.ControllerEndpoint;
import dev.fencing.agent.disable.DisableFileWatcher;
import dev.fencing.agent.membership.MemberlistGossip;
import dev.fencing.agent.metrics.MetricsHttpServer;
import dev.fencing.agent.quorum.MonotonicClock;
import dev.fencing.agent.quorum.TieBreaker;
import dev.fencing.agent.watchdog.WatchdogDevice;
import dev.fencing.memberlist.transport.Transport;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything {@code fencing-agent run} starts, in order, and stops in reverse: the agent core, gossip on memberlist,
 * the local API on its Unix socket, the disable-file watcher, {@code /metrics} and {@code /healthz}, and the
 * controller client with its reports. Closing it applies the SIGTERM rules of the watchdog.
 */
public final class AgentRuntime implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(AgentRuntime.class);

  /** How often a report is considered; it is sent on change, and at least every {@link #REPORT_EVERY}. */
  static final Duration REPORT_TICK = Duration.ofMillis(500);
  static final Duration REPORT_EVERY = Duration.ofSeconds(10);

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
      String agentVersion) {}

  private final Options options;
  private final List<AutoCloseable> started = new ArrayList<>();
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private FencingAgent agent;
  private MetricsHttpServer metrics;
  private LocalApiServer api;

  private AgentRuntime(Options options) {
    this.options = options;
  }

  /** Starts everything; on failure stops what was started and rethrows. */
  public static AgentRuntime start(Options options) throws IOException {
    AgentRuntime runtime = new AgentRuntime(options);
    try {
      runtime.startAll();
      return runtime;
    } catch (IOException | RuntimeException e) {
      runtime.close();
      throw e;
    }
  }

  private void startAll() throws IOException {
    MonotonicClock clock = MonotonicClock.system();
    EventHub hub = new EventHub(1024, InstantSource.system());
    hub.bindMetrics(registry);
    Optional<ControllerClient> controller = options.controller().map(endpoint -> new ControllerClient(endpoint,
        options.node(), options.agentVersion(), options.stateDir(), update -> {
          try {
            agent.applyConfig(ControllerConfigMapper.map(update, options.node()));
          } catch (IllegalArgumentException e) {
            LOG.error("node={} event=config_rejected source={} revision={} reason=\"{}\"", options.node(),
                update.source(), update.revision(), e.getMessage());
          }
        }));
    Optional<TieBreaker> controlPlane = controller.map(ControllerClient::controlPlaneTieBreaker);
    GossipFactory gossip = (config, meta) -> MemberlistGossip.create(config, meta, bindAddress(config),
        options.transportWrapper());
    agent = new FencingAgent(options.node(), new FencingAgent.Dependencies(clock, InstantSource.system(),
        options.device(), gossip, hub, registry, options.agentVersion(), Optional.of(new StateDirectory(
            options.stateDir())), controlPlane, Duration.ofSeconds(5), Duration.ofSeconds(10)));
    agent.start();
    started.add(agent);
    options.fileConfig().ifPresent(agent::applyConfig);

    api = new LocalApiServer(options.socket(), hub, () -> agent.snapshot().toStatus(clock.nanoTime()));
    api.start();
    started.add(api);

    DisableFileWatcher watcher = new DisableFileWatcher(options.disableFile(),
        state -> agent.setDisabled(state.present() ? Optional.of(state.reason()) : Optional.empty()));
    watcher.start();
    started.add(watcher);

    if (options.metricsPort() > 0) {
      metrics = new MetricsHttpServer(options.metricsPort(), registry, agent::healthy,
          () -> "the quorum loop has not ticked recently");
      metrics.start();
      started.add(metrics);
    }
    if (controller.isPresent()) {
      ControllerClient client = controller.get();
      client.start();
      started.add(client);
      startReports(client, clock);
    }
    LOG.info("node={} event=started socket={} disable_file={} state_dir={} metrics_port={} controller={} device={}",
        options.node(), options.socket(), options.disableFile(), options.stateDir(), options.metricsPort(),
        options.controller().map(ControllerEndpoint::target).orElse("none"), options.device().name());
  }

  private void startReports(ControllerClient client, MonotonicClock clock) {
    ScheduledExecutorService reporter = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "fencing-reports");
      t.setDaemon(true);
      return t;
    });
    started.add(reporter::shutdownNow);
    ReportThrottle throttle = new ReportThrottle(REPORT_EVERY.toNanos());
    reporter.scheduleWithFixedDelay(() -> {
      try {
        long now = clock.nanoTime();
        AgentSnapshot s = agent.snapshot();
        if (throttle.shouldSend(s, now)) {
          client.report(s.toReport(now));
        }
      } catch (RuntimeException e) {
        LOG.warn("node={} event=report_failed error=\"{}\"", options.node(), e.toString());
      }
    }, REPORT_TICK.toMillis(), REPORT_TICK.toMillis(), TimeUnit.MILLISECONDS);
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

  /** Stops in reverse order; the agent applies the watchdog's SIGTERM rules. Idempotent. */
  @Override
  public synchronized void close() {
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
