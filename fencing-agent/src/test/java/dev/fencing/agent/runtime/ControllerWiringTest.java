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

  @TempDir Path dir;

  /** A controller that answers every hello with one full config and records reports. */
  static final class FakeController extends AgentControlGrpc.AgentControlImplBase {
    final List<AgentReport> reports = new CopyOnWriteArrayList<>();
    final List<StreamObserver<ControllerMessage>> streams = new CopyOnWriteArrayList<>();
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
            reports.add(m.getReport());
          }
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
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
        .build();
    FakeController controller = new FakeController(config);
    Server server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create()).addService(controller)
        .build().start();
    RecordingWatchdogDevice device = new RecordingWatchdogDevice();
    Path state = dir.resolve("state");
    try (AgentRuntime runtime = AgentRuntime.start(options(Optional.of("127.0.0.1:" + server.getPort()), device,
        state, "a"))) {
      await().atMost(Duration.ofSeconds(20)).until(() -> controller.reports.stream()
          .anyMatch(r -> r.getArmed() && r.getAppliedRevision() == 1 && r.getEpoch().equals("e1")));
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
  void aNodeRemovedFromTheExpectedSetDisarms() throws Exception {
    int gossipPort = LoopbackPorts.free();
    StandaloneConfig resolved = StandaloneConfigLoader.parse("policy.yaml", "group: ctl\nexpected:\n"
        + "  - {name: node-a, address: 127.0.0.1:" + gossipPort + "}\nfencing:\n  watchdog: {timeout: 5s}\n"
        + "  quorum: {tieBreakers: []}\n  timings: " + AgentCluster.FAST_TIMINGS + "\n");
    GroupConfig config = GroupConfig.newBuilder().setGroup("ctl").setNodeName("node-a")
        .setPolicy(PolicyProtos.toProto(resolved.policy()))
        .addMembers(Member.newBuilder().setName("node-a").setGossipAddress("127.0.0.1:" + gossipPort))
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

  private AgentRuntime.Options options(Optional<String> controller, RecordingWatchdogDevice device, Path state,
      String suffix) throws java.io.IOException {
    Path token = java.nio.file.Files.writeString(dir.resolve("token"), "test-token");
    return new AgentRuntime.Options("node-a", Optional.empty(),
        controller.map(target -> ControllerEndpoint.plaintext(target, token)), dir.resolve("ctl-" + suffix + ".sock"),
        device, dir.resolve("disable"), state, 0, Optional.empty(), Optional.empty(), "test");
  }
}
