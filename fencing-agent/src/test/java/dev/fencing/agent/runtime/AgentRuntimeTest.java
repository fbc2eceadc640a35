package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.Empty;
import dev.fencing.agent.api.LocalApiChannel;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.StandaloneConfigLoader;
import dev.fencing.agent.emulator.EmulatedWatchdog;
import dev.fencing.agent.emulator.WatchdogEventLog;
import dev.fencing.agent.watchdog.RecordingWatchdogDevice;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.DisarmReason;
import dev.fencing.proto.fencing.v1.FencingGrpc;
import io.grpc.ManagedChannel;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** What {@code fencing-agent run} starts, end to end on one node: emulated watchdog FIFO, socket, metrics, disable file. */
class AgentRuntimeTest {

  @TempDir Path dir;

  @Test
  void aSingleNodeAgentArmsServesStatusAndMetricsHonoursTheDisableFileAndDisarmsOnStop() throws Exception {
    Path fifo = dir.resolve("watchdog");
    ByteArrayOutputStream lines = new ByteArrayOutputStream();
    String yaml = "group: solo\nexpected:\n  - {name: node-a, address: 127.0.0.1:0, addresses: {InternalIP: 10.1.1.1}}\n"
        + "fencing:\n  watchdog: {timeout: 5s}\n  quorum: {tieBreakers: []}\n  timings: " + AgentCluster.FAST_TIMINGS
        + "\n";
    AgentConfig config = AgentConfig.fromStandalone(StandaloneConfigLoader.parse("solo.yaml",
        yaml.replace("127.0.0.1:0", "127.0.0.1:" + LoopbackPorts.free())), "node-a", "solo.yaml");
    Path socket = dir.resolve("agent.sock");
    Path disable = dir.resolve("disable");
    try (WatchdogEventLog log = new WatchdogEventLog(new PrintStream(lines, true, StandardCharsets.UTF_8), null,
            InstantSource.system());
        EmulatedWatchdog emulator = new EmulatedWatchdog(fifo, Duration.ofSeconds(5), false, "true", log)) {
      emulator.start();
      AgentRuntime runtime = AgentRuntime.start(new AgentRuntime.Options("node-a", Optional.of(config),
          Optional.empty(), socket, RunCommand.watchdog(fifo), disable, dir.resolve("state"), 0, Optional.empty(),
          Optional.empty(), "test", true));
      ManagedChannel channel = LocalApiChannel.open(socket);
      try {
        FencingGrpc.FencingBlockingStub stub = FencingGrpc.newBlockingStub(channel);
        await().atMost(Duration.ofSeconds(15)).until(() -> stub.getStatus(Empty.getDefaultInstance()).getArmed());
        AgentStatus status = stub.getStatus(Empty.getDefaultInstance());
        assertThat(status.getQuorumHeld()).isTrue();
        assertThat(status.getGroup()).isEqualTo("solo");
        assertThat(status.getTimings().getTStop().getNanos()).isEqualTo(950_000_000);
        assertThat(status.getConfigSource()).isEqualTo("file");
        assertThat(emulator.running()).isTrue();
        await().atMost(Duration.ofSeconds(5)).until(() -> stub.getAll(Empty.getDefaultInstance()).getNodesList()
            .stream().anyMatch(n -> n.getName().equals("node-a")
                && "10.1.1.1".equals(n.getAddressesMap().get("InternalIP"))));

        Files.writeString(disable, "maintenance window 42\n");
        await().atMost(Duration.ofSeconds(5)).until(() -> !stub.getStatus(Empty.getDefaultInstance()).getArmed());
        assertThat(stub.getStatus(Empty.getDefaultInstance()).getDisarmReasonsList())
            .extracting(DisarmReason::getKind).containsExactly(DisarmReason.Kind.KIND_DISABLE_FILE);
        await().atMost(Duration.ofSeconds(5)).until(() -> !emulator.running());
        Files.delete(disable);
        await().atMost(Duration.ofSeconds(15)).until(() -> stub.getStatus(Empty.getDefaultInstance()).getArmed()
            && emulator.running());
      } finally {
        channel.shutdownNow();
      }
      runtime.close();
      await().atMost(Duration.ofSeconds(5)).until(() -> !emulator.running());
      assertThat(emulator.resets()).isZero();
      assertThat(lines.toString(StandardCharsets.UTF_8)).contains("disarmed");
    }
  }

  @Test
  void runRefusesToStartWithoutAConfigOrController() {
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new RunCommand()).setErr(new PrintWriter(err));
    assertThat(cli.execute("--node", "node-a")).isEqualTo(2);
    assertThat(err.toString()).contains("--config FILE").contains("--controller HOST:PORT");
  }

  @Test
  void runReportsConfigErrorsWithTheirLine() throws Exception {
    Path file = dir.resolve("bad.yaml");
    Files.writeString(file, "group: g\nexpected:\n  - {name: node-a, address: nowhere}\n");
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new RunCommand()).setErr(new PrintWriter(err));
    assertThat(cli.execute("--node", "node-a", "--config", file.toString())).isEqualTo(2);
    assertThat(err.toString()).contains("line 3: expected[0].address");
  }

  @Test
  void runRefusesControlPlaneWithoutAController() throws Exception {
    Path file = dir.resolve("cp.yaml");
    Files.writeString(file, "group: g\nexpected:\n  - {name: node-a, address: 127.0.0.1:7946}\n"
        + "  - {name: node-b, address: 127.0.0.1:7947}\nfencing:\n  quorum: {tieBreakers: [ControlPlane]}\n");
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new RunCommand()).setErr(new PrintWriter(err));
    assertThat(cli.execute("--node", "node-a", "--config", file.toString())).isEqualTo(2);
    assertThat(err.toString()).contains("ControlPlane needs --controller");
  }

  @Test
  void metricsAreServedWithFencingNames() throws Exception {
    String yaml = "group: solo\nexpected:\n  - {name: node-a, address: 127.0.0.1:" + LoopbackPorts.free() + "}\n"
        + "fencing:\n  mode: Notify\n  quorum: {tieBreakers: []}\n  timings: " + AgentCluster.FAST_TIMINGS + "\n";
    AgentConfig config = AgentConfig.fromStandalone(StandaloneConfigLoader.parse("m.yaml", yaml), "node-a", "m.yaml");
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      port = s.getLocalPort();
    }
    int probePort = LoopbackPorts.free();
    try (AgentRuntime runtime = AgentRuntime.start(new AgentRuntime.Options("node-a", Optional.of(config),
        Optional.empty(), dir.resolve("m.sock"), new RecordingWatchdogDevice(), dir.resolve("disable"), dir.resolve("state"),
        port, Optional.empty(), Optional.empty(), "test", Optional.empty(), false, Optional.empty(), Path.of("/"),
        probePort))) {
      HttpClient http = HttpClient.newHttpClient();
      await().atMost(Duration.ofSeconds(10)).until(() -> http.send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + port + "/metrics")).build(), HttpResponse.BodyHandlers.ofString())
          .body().contains("fencing_quorum_held 1.0"));
      String body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      assertThat(body).contains("fencing_armed 0.0", "fencing_heartbeats_sent_total",
          "fencing_watchdog_feeds_total", "fencing_members{state=\"alive\"}", "memberlist_packets_sent_total",
          "fencing_watchdog_unavailable 0.0", "fencing_watchdog_open_failures_total 0.0",
          "fencing_watchdog_feed_interval_seconds 0.2",
          "fencing_disarm_reason{kind=\"NOTIFY_MODE\"} 1.0", "fencing_disarm_reason{kind=\"DISABLE_FILE\"} 0.0",
          "fencing_in_progress 0.0", "fencing_heartbeat_inbox_messages ",
          "fencing_watchdog_last_feed_timestamp_seconds ",
          "fencing_build_info{component=\"agent\",version=\"test\"} 1", "jvm_memory_used_bytes",
          "jvm_threads_live_threads", "process_uptime_seconds", "process_files_open_files");
      assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz")).build(),
          HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
      assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz")).build(),
          HttpResponse.BodyHandlers.ofString()).statusCode()).as("solo: config known, quorum held").isEqualTo(200);
      // The kubelet's probes: the same answers on the loopback listener.
      assertThat(runtime.probePort()).isEqualTo(probePort);
      for (String path : List.of("/healthz", "/readyz")) {
        assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + probePort + path)).build(),
            HttpResponse.BodyHandlers.ofString()).statusCode()).as(path).isEqualTo(200);
      }
    }
  }

  @Test
  void runRefusesAProbePortThatIsTheMetricsPort() {
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new RunCommand()).setErr(new PrintWriter(err));
    assertThat(cli.execute("--node", "node-a", "--controller", "127.0.0.1:1", "--metrics-port", "9652",
        "--probe-port", "9652")).isEqualTo(2);
    assertThat(err.toString()).contains("--probe-port 9652 is also --metrics-port");
  }
}
