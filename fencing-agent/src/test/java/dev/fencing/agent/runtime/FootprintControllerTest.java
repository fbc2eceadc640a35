package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.control.ControllerChannels;
import dev.fencing.agent.control.ControllerEndpoint;
import dev.fencing.proto.nodemanager.v1.AgentControlGrpc;
import dev.fencing.proto.nodemanager.v1.AgentHello;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import dev.fencing.proto.nodemanager.v1.Member;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The benchmark's controller answers an agent's TLS stream as the real one would for an idle group. */
class FootprintControllerTest {

  @Test
  void anAgentConnectingOverTlsWithTheWrittenCaAndTokenGetsItsGroupsFullConfig(@TempDir Path dir) throws Exception {
    byte[] key = new byte[32];
    key[0] = 7;
    try (FootprintController controller = new FootprintController(List.of(7001, 7002, 7003), key).start(dir)) {
      ManagedChannel channel = ControllerChannels.open(new ControllerEndpoint("127.0.0.1:" + controller.port(),
          java.util.Optional.of(dir.resolve("ca.crt")), java.util.Optional.of("localhost"), false,
          dir.resolve("token")), "node-2", Duration.ofSeconds(30));
      try {
        CompletableFuture<ControllerMessage> first = new CompletableFuture<>();
        StreamObserver<AgentMessage> requests = AgentControlGrpc.newStub(channel).connect(new StreamObserver<>() {
          @Override
          public void onNext(ControllerMessage value) {
            first.complete(value);
          }

          @Override
          public void onError(Throwable t) {
            first.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {}
        });
        requests.onNext(AgentMessage.newBuilder().setHello(AgentHello.newBuilder().setNodeName("node-2")).build());
        GroupConfig full = first.get(10, TimeUnit.SECONDS).getFull();
        requests.onNext(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(true)).build());
        requests.onCompleted();

        assertThat(full.getNodeName()).isEqualTo("node-2");
        assertThat(full.getGroup()).isEqualTo("footprint");
        assertThat(full.getMembersList()).extracting(Member::getName).containsExactly("node-0", "node-1", "node-2");
        assertThat(full.getMembers(2).getGossipAddress()).isEqualTo("127.0.0.1:7003");
        assertThat(full.getKeyring().getPrimary().toByteArray()).isEqualTo(key);
        assertThat(full.getPolicy().getTieBreakersList()).hasSize(1);
        assertThat(controller.helloFrom()).containsExactly("node-2");
        assertThat(controller.hellos()).as("one stream, one hello").isEqualTo(1);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> controller.reports() == 1);
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }
}
