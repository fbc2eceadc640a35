package dev.fencing.agent.runtime;

import dev.fencing.agent.apiserver.ApiServerEndpoint;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.control.ControllerEndpoint;
import dev.fencing.agent.config.ConfigException;
import dev.fencing.agent.config.HostPort;
import dev.fencing.agent.config.StandaloneConfig;
import dev.fencing.agent.config.StandaloneConfigLoader;
import dev.fencing.agent.config.StateDirectory;
import dev.fencing.agent.watchdog.JnaLibc;
import dev.fencing.agent.watchdog.Libc;
import dev.fencing.agent.watchdog.LinuxWatchdogDevice;
import dev.fencing.agent.watchdog.NowayoutProbe;
import dev.fencing.agent.watchdog.UnavailableWatchdogDevice;
import dev.fencing.agent.watchdog.WatchdogDevice;
import dev.fencing.logging.LogFormat;
import dev.fencing.logging.LogLevels;
import dev.fencing.logging.LogSetup;
import dev.fencing.policy.TieBreakerKind;
import dev.fencing.policy.Violation;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code fencing-agent run}: runs the agent until SIGTERM. Standalone with {@code --config FILE}; with
 * {@code --controller HOST:PORT} and no file it gets group, members, policy and signals from the controller (and
 * from the controller config cached in the state dir while the controller is unreachable).
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = {
      "Runs the fencing agent: gossip membership, round-trip quorum, watchdog, local API, disable file, metrics.",
      "SIGTERM while feeding disarms the watchdog (magic close); while fencing it closes without the magic",
      "character so the reset completes."
    },
    exitCodeListHeading = "Exit codes:%n",
    exitCodeList = {"0:stopped by a signal", "1:could not start (socket, port)", "2:invalid command line or config",
        "70:an Error in one of the agent's threads (armed: the watchdog resets the node)"})
public final class RunCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--config", paramLabel = "FILE",
      description = "standalone config (YAML: group, expected, fencing); without it --controller is required")
  Path config;

  @Option(names = "--node", required = true, paramLabel = "NAME", description = "this node's name (gossip name)")
  String node;

  @Option(names = "--socket", paramLabel = "PATH", defaultValue = "/var/run/fencing-agent.sock",
      description = "local API Unix socket (default: ${DEFAULT-VALUE})")
  Path socket;

  @Option(names = "--watchdog-device", paramLabel = "PATH", defaultValue = "/dev/watchdog",
      description = "watchdog device, or a FIFO read by the softdog emulator (default: ${DEFAULT-VALUE})")
  Path watchdogDevice;

  @Option(names = "--disk-root", paramLabel = "DIR", defaultValue = "/",
      description = "where the host's root is mounted; the group's disk.device is opened under it (the DaemonSet"
          + " mounts the host's /dev at /host/dev and passes /host; default: ${DEFAULT-VALUE})")
  Path diskRoot;

  @Option(names = "--disable-file", paramLabel = "PATH", defaultValue = "/var/run/fencing-agent/disable",
      description = "while this file exists the watchdog is disarmed (default: ${DEFAULT-VALUE})")
  Path disableFile;

  @Option(names = "--status-file", paramLabel = "PATH", defaultValue = "/var/run/fencing-agent/status",
      description = "host-visible status file (key=value lines: armed, reasons, disable_file, quorum, revision,"
          + " updated_unix), replaced atomically on every change and at least every 5 s; an empty value turns it off"
          + " (default: ${DEFAULT-VALUE})")
  String statusFile;

  @Option(names = "--state-dir", paramLabel = "DIR", defaultValue = "/var/lib/fencing-agent",
      description = "state dir: cached controller config, fence record (default: ${DEFAULT-VALUE})")
  Path stateDir = StateDirectory.DEFAULT;

  @Option(names = "--metrics-port", paramLabel = "PORT", defaultValue = "0",
      description = "serve /metrics, /healthz and /readyz on this TCP port; 0 = off (default: ${DEFAULT-VALUE})")
  int metricsPort;

  @Option(names = "--probe-port", paramLabel = "PORT", defaultValue = "0",
      description = "also serve /healthz and /readyz on this TCP port of the loopback address only, for the"
          + " kubelet's probes: with the host's network, pods can flood the metrics port but cannot reach loopback;"
          + " 0 = off (default: ${DEFAULT-VALUE})")
  int probePort;

  @Option(names = "--bind", paramLabel = "ADDR[:PORT]",
      description = "gossip bind address (default: this node's address from the config)")
  String bind;

  @Option(names = "--controller", paramLabel = "HOST:PORT",
      description = "node-manager controller's AgentControl endpoint")
  String controller;

  @Option(names = "--allow-plaintext-gossip",
      description = "arm the watchdog even when the group has no gossip keyring (unauthenticated gossip and"
          + " heartbeats: labs only). Without it such an agent stays disarmed (reason NO_GOSSIP_KEY).")
  boolean allowPlaintextGossip;

  @Option(names = "--controller-ca", paramLabel = "FILE",
      description = "PEM CA bundle the controller's TLS certificate must chain to (required with --controller unless"
          + " --insecure-plaintext)")
  Path controllerCa;

  @Option(names = "--controller-server-name", paramLabel = "NAME",
      description = "name the controller's certificate must be valid for (default: the host of --controller)")
  String controllerServerName;

  @Option(names = "--insecure-plaintext",
      description = "talk to the controller without TLS (local labs only; logged at every connect)")
  boolean insecurePlaintext;

  @Option(names = "--token-file", paramLabel = "FILE", defaultValue = "/etc/fencing-agent/token/token",
      description = "projected ServiceAccount token (audience fencing-agent) sent to the controller, re-read on every"
          + " connect (default: ${DEFAULT-VALUE})")
  Path tokenFile;

  @Option(names = "--log-level", paramLabel = "LEVEL|LOGGER=LEVEL", split = ",", defaultValue = "info",
      description = "error|warn|info|debug|trace, and per logger (dev.fencing.memberlist=debug); repeatable or"
          + " comma-separated (default: ${DEFAULT-VALUE})")
  List<String> logLevel;

  @Option(names = "--log-format", paramLabel = "text|json", defaultValue = "text",
      description = "text lines, or one JSON object per line; both carry node and group (default: ${DEFAULT-VALUE})")
  String logFormat;

  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    LogLevels levels;
    LogFormat format;
    try {
      levels = LogLevels.parse(logLevel);
      format = LogFormat.parse(logFormat);
    } catch (IllegalArgumentException e) {
      err.println("run: " + e.getMessage());
      return 2;
    }
    if (config == null && controller == null) {
      err.println("run: pass --config FILE (standalone) or --controller HOST:PORT (an agent started without a"
          + " config file gets everything from the controller)");
      return 2;
    }
    if (probePort < 0 || probePort > 65535) {
      err.println("run: --probe-port " + probePort + " is outside 0..65535");
      return 2;
    }
    if (probePort > 0 && probePort == metricsPort) {
      err.println("run: --probe-port " + probePort + " is also --metrics-port: pick another port for one of them");
      return 2;
    }
    if (metricsPort < 0 || metricsPort > 65535) {
      err.println("run: --metrics-port " + metricsPort + " is outside 0..65535");
      return 2;
    }
    Optional<AgentConfig> fileConfig = Optional.empty();
    Optional<ApiServerEndpoint> apiServer = Optional.empty();
    if (config != null) {
      try {
        StandaloneConfig standalone = StandaloneConfigLoader.load(config);
        if (controller == null && standalone.policy().tieBreakers().contains(TieBreakerKind.CONTROL_PLANE)) {
          err.println(config + ": fencing.quorum.tieBreakers: ControlPlane needs --controller HOST:PORT; without a"
              + " controller use LowestName");
          return 2;
        }
        apiServer = standalone.apiServerProbe();
        for (Violation warning : standalone.warnings()) {
          err.println("warning: " + config + ": " + warning.field().replaceFirst("^spec\\.", "") + ": "
              + warning.message());
        }
        fileConfig = Optional.of(AgentConfig.fromStandalone(standalone, node, config.toString()));
        if (standalone.gossipKeys().isEmpty()) {
          err.println("warning: " + config + ": no gossip.keys: gossip and quorum heartbeats are unauthenticated; "
              + (allowPlaintextGossip ? "running anyway (--allow-plaintext-gossip)"
                  : "the watchdog will not arm (pass --allow-plaintext-gossip for a lab)"));
        }
      } catch (ConfigException e) {
        err.println(e.getMessage());
        return 2;
      }
    }
    Optional<ControllerEndpoint> endpoint;
    try {
      endpoint = Optional.ofNullable(controller).map(target -> new ControllerEndpoint(target,
          Optional.ofNullable(controllerCa), Optional.ofNullable(controllerServerName), insecurePlaintext, tokenFile));
    } catch (IllegalArgumentException e) {
      err.println("run: " + e.getMessage());
      return 2;
    }
    if (controller == null && (controllerCa != null || controllerServerName != null || insecurePlaintext)) {
      err.println("run: --controller-ca, --controller-server-name and --insecure-plaintext only apply with"
          + " --controller");
      return 2;
    }
    Optional<InetSocketAddress> bindAddress;
    try {
      bindAddress = Optional.ofNullable(bind).map(RunCommand::parseBind);
    } catch (IllegalArgumentException e) {
      err.println("run: --bind " + e.getMessage());
      return 2;
    }
    String version = Optional.ofNullable(RunCommand.class.getPackage().getImplementationVersion()).orElse("dev");
    AgentRuntime.Options options = new AgentRuntime.Options(node, fileConfig, endpoint, socket,
        watchdog(watchdogDevice), disableFile, stateDir, metricsPort, bindAddress, Optional.empty(), version,
        apiServer, allowPlaintextGossip, statusFile(statusFile), diskRoot, probePort);
    // Any Error that kills a thread (memberlist's receive threads included) ends the process: a half-dead agent
    // must not keep feeding. The agent's own loops report theirs directly (scheduled tasks would swallow them).
    Thread.setDefaultUncaughtExceptionHandler(FatalErrors.uncaught(FatalErrors.haltProcess()));
    // node= and group= on every line; the group is known once a config is in force and follows the controller's
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("node", node);
    fields.put("group", fileConfig.map(AgentConfig::group).orElse(null));
    LogSetup.configure(levels, format, fields);
    AgentRuntime runtime;
    try {
      runtime = AgentRuntime.start(options, group -> LogSetup.putField("group", group));
    } catch (IOException | RuntimeException e) {
      err.println("run: could not start: " + e.getMessage());
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      runtime.close();
      stopped.countDown();
    }, "fencing-shutdown"));
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      runtime.close();
    }
    return 0;
  }

  /** {@code --status-file}: empty (or blank) turns the file off. */
  static Optional<Path> statusFile(String value) {
    return value == null || value.isBlank() ? Optional.empty() : Optional.of(Path.of(value));
  }

  /** The Linux device through JNA; if libc cannot be loaded, a device that reports why on every open. */
  static WatchdogDevice watchdog(Path path) {
    Libc libc;
    try {
      libc = JnaLibc.load();
    } catch (UnsatisfiedLinkError | RuntimeException e) {
      return new UnavailableWatchdogDevice(path.toString(), "cannot load libc through JNA: " + e.getMessage());
    }
    return new LinuxWatchdogDevice(path, libc, NowayoutProbe.system());
  }

  static InetSocketAddress parseBind(String value) {
    HostPort parsed = HostPort.parse(value, false);
    try {
      return new InetSocketAddress(InetAddress.getByName(parsed.host()), parsed.port());
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("'" + value + "': unknown host " + parsed.host());
    }
  }
}
