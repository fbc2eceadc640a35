package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.control.ControllerEndpoint;
import dev.fencing.agent.config.StandaloneConfig;
import dev.fencing.agent.config.StandaloneConfigLoader;
import dev.fencing.agent.watchdog.RecordingWatchdogDevice;
import dev.fencing.policy.PolicyProtos;
import dev.fencing.proto.fencing.v1.DisarmReason;
import dev.fencing.proto.nodemanager.v1.AgentControlGrpc;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ConfigDelta;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.GossipKeyring;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import dev.fencing.proto.nodemanager.v1.Maintenance;
import dev.fencing.proto.nodemanager.v1.Member;
import dev.fencing.proto.nodemanager.v1.NodeSignals;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --controller}: no config file; the group, members, policy and signals come from the controller, reports
 * go back, and a restart without the controller runs on the config cached in the state dir.
 */
class ControllerWiringTest {

  /** The group's gossip keyring as the controller sends it: an agent without one would not arm. */
  static final GossipKeyring KEYRING = GossipKeyring.newBuilder()
      .setPrimary(com.google.protobuf.ByteString.copyFrom(new byte[16])).setRevision(7).build();

  @TempDir Path dir;

  /** A controller that answers every hello with one full config and records reports. */
  static final class FakeController extends AgentControlGrpc.AgentControlImplBase {
    final List<AgentReport> reports = new CopyOnWriteArrayList<>();
    final List<StreamObserver<ControllerMessage>> streams = new CopyOnWriteArrayList<>();
    /** In order: "report", "final-report", "half-closed". */
    final List<String> events = new CopyOnWriteArrayList<>();
    /** Read when the final report arrives (e.g. the device's events then). */
    volatile java.util.function.Supplier<Object> atFinalReport = () -> "";
    volatile Object seenAtFinalReport;
    final GroupConfig config;

    FakeController(GroupConfig config) {
      this.config = config;
    }

    @Override
    public StreamObserver<AgentMessage> connect(StreamObserver<ControllerMessage> out) {
      return new StreamObserver<>() {
        @Override
        public void onNext(AgentMessage m) {
          if (m.hasHello()) {
            streams.add(out);
            out.onNext(ControllerMessage.newBuilder().setEpoch("e1").setRevision(1).setFull(config).build());
          } else if (m.hasReport()) {
            if (m.getReport().getFinalReport()) {
              seenAtFinalReport = atFinalReport.get();
            }
            events.add(m.getReport().getFinalReport() ? "final-report" : "report");
            reports.add(m.getReport());
          }
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          events.add("half-closed");
          out.onCompleted();
        }
      };
    }
  }

  @Test
  void anAgentWithoutAConfigFileRunsOnTheControllersConfigAndReportsBack() throws Exception {
    int gossipPort = LoopbackPorts.free();
    StandaloneConfig resolved = StandaloneConfigLoader.parse("policy.yaml", "group: ctl\nexpected:\n"
        + "  - {name: node-a, address: 127.0.0.1:" + gossipPort + "}\nfencing:\n  watchdog: {timeout: 5s}\n"
        + "  quorum: {tieBreakers: [ControlPlane]}\n  timings: " + AgentCluster.FAST_TIMINGS + "\n");
    GroupConfig config = GroupConfig.newBuilder().setGroup("ctl").setNodeName("node-a")
        .setPolicy(PolicyProtos.toProto(resolved.policy()))
        .addMembers(Member.newBuilder().setName("node-a").setGossipAddress("127.0.0.1:" + gossipPort)
            .putAddresses("InternalIP", "10.2.2.2"))
        .setKeyring(KEYRING)
        .build();
    FakeController controller = new FakeController(config);
    Server server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create()).addService(controller)
        .build().start();
    RecordingWatchdogDevice device = new RecordingWatchdogDevice();
    Path state = dir.resolve("state");
    List<String> groupsApplied = new CopyOnWriteArrayList<>();
    try (AgentRuntime runtime = AgentRuntime.start(options(Optional.of("127.0.0.1:" + server.getPort()), device,
        state, "a"), groupsApplied::add)) {
      await().atMost(Duration.ofSeconds(20)).until(() -> controller.reports.stream()
          .anyMatch(r -> r.getArmed() && r.getAppliedRevision() == 1 && r.getEpoch().equals("e1")
              && r.getKeyringRevision() == KEYRING.getRevision()));
      // run puts it into every log line's group=
      assertThat(groupsApplied).containsExactly("ctl");
      assertThat(runtime.agent().snapshot().toStatus(System.nanoTime()).getConfigSource()).isEqualTo("controller");

      NodeSignals maintenance = NodeSignals.newBuilder().setMaintenance(Maintenance.newBuilder()
          .setSource("update.node.deckhouse.io/disruption-approved").setValue("")).build();
      controller.streams.get(controller.streams.size() - 1).onNext(ControllerMessage.newBuilder().setEpoch("e1")
          .setRevision(2).setDelta(ConfigDelta.newBuilder().setBaseRevision(1).setSignals(maintenance)).build());
      await().atMost(Duration.ofSeconds(10)).until(() -> controller.reports.stream()
          .anyMatch(r -> !r.getArmed() && r.getAppliedRevision() == 2 && r.getDisarmReasonsList().stream()
              .anyMatch(d -> d.getKind() == DisarmReason.Kind.KIND_MAINTENANCE)));
      assertThat(device.events()).endsWith("magic-close");
    } finally {
      server.shutdownNow();
    }

    RecordingWatchdogDevice afterRestart = new RecordingWatchdogDevice();
    try (AgentRuntime runtime = AgentRuntime.start(options(Optional.of("127.0.0.1:1"), afterRestart, state, "b"))) {
      await().atMost(Duration.ofSeconds(10)).until(() -> runtime.agent().snapshot().config().isPresent());
      var status = runtime.agent().snapshot().toStatus(System.nanoTime());
      assertThat(status.getConfigSource()).isEqualTo("cache");
      assertThat(status.getGroup()).isEqualTo("ctl");
      assertThat(status.getConfigRevision()).isEqualTo(2);
      assertThat(status.getDisarmReasonsList()).extracting(DisarmReason::getKind)
          .contains(DisarmReason.Kind.KIND_MAINTENANCE);
    }
  }

  @Test
  void anUnusableApiServerProbeLeavesTheRestOfTheConfigInForce() throws Exception {
    // a controller talking to its API server over http:// sends that URL; the agent probes https only
    GroupConfig config = singleNodeConfig().toBuilder()
        .setApiServerProbe(dev.fencing.proto.nodemanager.v1.ApiServerProbe.newBuilder()
            .setUrl("http://198.18.0.2:6443"))
        .build();
    FakeController controller = new FakeController(config);
    Server server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create()).addService(controller)
        .build().start();
    RecordingWatchdogDevice device = new RecordingWatchdogDevice();
    try (AgentRuntime runtime = AgentRuntime.start(options(Optional.of("127.0.0.1:" + server.getPort()), device,
        dir.resolve("state"), "probe"))) {
      await().atMost(Duration.ofSeconds(20)).until(() -> runtime.agent().snapshot().watchdog().armed());
      assertThat(runtime.agent().snapshot().config()).isPresent();
    } finally {
      server.shutdownNow();
    }
  }

  @Test
  void aNodeRemovedFromTheExpectedSetDisarms() throws Exception {
    int gossipPort = LoopbackPorts.free();
    StandaloneConfig resolved = StandaloneConfigLoader.parse("policy.yaml", "group: ctl\nexpected:\n"
        + "  - {name: node-a, address: 127.0.0.1:" + gossipPort + "}\nfencing:\n  watchdog: {timeout: 5s}\n"
        + "  quorum: {tieBreakers: []}\n  timings: " + AgentCluster.FAST_TIMINGS + "\n");
    GroupConfig config = GroupConfig.newBuilder().setGroup("ctl").setNodeName("node-a")
        .setPolicy(PolicyProtos.toProto(resolved.policy()))
        .addMembers(Member.newBuilder().setName("node-a").setGossipAddress("127.0.0.1:" + gossipPort))
        .setKeyring(KEYRING)
        .build();
    FakeController controller = new FakeController(config);
    Server server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create()).addService(controller)
        .build().start();
    RecordingWatchdogDevice device = new RecordingWatchdogDevice();
    try (AgentRuntime runtime = AgentRuntime.start(options(Optional.of("127.0.0.1:" + server.getPort()), device,
        dir.resolve("state"), "r"))) {
      await().atMost(Duration.ofSeconds(20)).until(() -> runtime.agent().snapshot().watchdog().armed());
      controller.streams.get(controller.streams.size() - 1).onNext(ControllerMessage.newBuilder().setEpoch("e1")
          .setRevision(2).setDelta(ConfigDelta.newBuilder().setBaseRevision(1).setMemberRemoved("node-a")).build());
      await().atMost(Duration.ofSeconds(10)).until(() -> !runtime.agent().snapshot().watchdog().armed());
      assertThat(runtime.agent().snapshot().watchdog().disarmReasons()).extracting(DisarmReason::getKind)
          .contains(DisarmReason.Kind.KIND_BEING_REMOVED);
      assertThat(device.events()).endsWith("magic-close");
    } finally {
      server.shutdownNow();
    }
  }

  @Test
  void aStoppedAgentDisarmsThenSendsAFinalReportAndOnlyThenClosesTheStream() throws Exception {
    FakeController controller = new FakeController(singleNodeConfig());
    RecordingWatchdogDevice device = new RecordingWatchdogDevice();
    controller.atFinalReport = device::events;
    stopAnArmedAgent(controller, device, "stop", runtime -> { });

    AgentReport last = controller.reports.get(controller.reports.size() - 1);
    assertThat(last.getFencingInProgress()).isFalse();
    assertThat(last.getDisarmReasonsList()).extracting(DisarmReason::getKind)
        .containsExactly(DisarmReason.Kind.KIND_SHUTTING_DOWN);
    assertThat(controller.seenAtFinalReport).as("disarmed before the final report was sent")
        .asList().endsWith("magic-close");
  }

  @Test
  void theDisableFileIsReportedAtOnceAndAStopAfterItStillEndsWithTheFinalReport() throws Exception {
    FakeController controller = new FakeController(singleNodeConfig());
    RecordingWatchdogDevice device = new RecordingWatchdogDevice();
    stopAnArmedAgent(controller, device, "disable", runtime -> {
      java.nio.file.Files.writeString(dir.resolve("disable"), "kernel upgrade\n");
      await().atMost(Duration.ofSeconds(10)).until(() -> controller.reports.stream().anyMatch(r -> !r.getArmed()
          && r.getDisarmReasonsList().stream().anyMatch(d -> d.getKind() == DisarmReason.Kind.KIND_DISABLE_FILE)));
      assertThat(device.events()).endsWith("magic-close");
    });
  }

  /** What happens to an armed agent before it is stopped. */
  @FunctionalInterface
  private interface BeforeStop {
    void run(AgentRuntime runtime) throws Exception;
  }

  /**
   * Starts an agent against {@code controller}, waits until it reports armed, runs {@code beforeStop}, stops it as
   * the SIGTERM hook does, and checks the stream ended with the final report (armed = false) and then the half-close.
   */
  private void stopAnArmedAgent(FakeController controller, RecordingWatchdogDevice device, String suffix,
      BeforeStop beforeStop) throws Exception {
    Server server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create()).addService(controller)
        .build().start();
    try {
      AgentRuntime runtime = AgentRuntime.start(options(Optional.of("127.0.0.1:" + server.getPort()), device,
          dir.resolve("state"), suffix));
      await().atMost(Duration.ofSeconds(20)).until(() -> controller.reports.stream().anyMatch(AgentReport::getArmed));
      beforeStop.run(runtime);

      runtime.close();

      assertThat(controller.events).endsWith("final-report", "half-closed");
      AgentReport last = controller.reports.get(controller.reports.size() - 1);
      assertThat(last.getFinalReport()).isTrue();
      assertThat(last.getArmed()).isFalse();
    } finally {
      server.shutdownNow();
    }
  }

  private GroupConfig singleNodeConfig() throws Exception {
    int gossipPort = LoopbackPorts.free();
    StandaloneConfig resolved = StandaloneConfigLoader.parse("policy.yaml", "group: ctl\nexpected:\n"
        + "  - {name: node-a, address: 127.0.0.1:" + gossipPort + "}\nfencing:\n  watchdog: {timeout: 5s}\n"
        + "  quorum: {tieBreakers: []}\n  timings: " + AgentCluster.FAST_TIMINGS + "\n");
    return GroupConfig.newBuilder().setGroup("ctl").setNodeName("node-a")
        .setPolicy(PolicyProtos.toProto(resolved.policy()))
        .addMembers(Member.newBuilder().setName("node-a").setGossipAddress("127.0.0.1:" + gossipPort))
        .setKeyring(KEYRING)
        .build();
  }

  private AgentRuntime.Options options(Optional<String> controller, RecordingWatchdogDevice device, Path state,
      String suffix) throws java.io.IOException {
    Path token = java.nio.file.Files.writeString(dir.resolve("token"), "test-token");
    return new AgentRuntime.Options("node-a", Optional.empty(),
        controller.map(target -> ControllerEndpoint.plaintext(target, token)), dir.resolve("ctl-" + suffix + ".sock"),
        device, dir.resolve("disable"), state, 0, Optional.empty(), Optional.empty(), "test");
  }
}
