package dev.fencing.agent.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.FencingGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The standard gRPC health service and server reflection next to fencing.v1 on the agent's Unix socket. */
class LocalApiServerHealthReflectionTest {

  private static final Instant T0 = Instant.parse("2026-11-23T10:00:00Z");
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  @TempDir Path dir;
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  private LocalApiServer startServer(Path socket) throws IOException {
    LocalApiServer server = new LocalApiServer(socket, new EventHub(16, InstantSource.fixed(T0)),
        () -> AgentStatus.newBuilder().setNode("node-a").build());
    server.start();
    toClose.add(server);
    return server;
  }

  private ManagedChannel channel(Path socket) {
    ManagedChannel channel = LocalApiChannel.open(socket);
    toClose.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    return channel;
  }

  private static HealthCheckRequest service(String name) {
    return HealthCheckRequest.newBuilder().setService(name).build();
  }

  @Test
  void healthCheckReportsFencingAndTheWholeServerServingWhileTheAgentRuns() throws IOException {
    Path socket = dir.resolve("agent.sock");
    startServer(socket);
    HealthGrpc.HealthBlockingStub health =
        HealthGrpc.newBlockingStub(channel(socket)).withDeadlineAfter(10, TimeUnit.SECONDS);

    assertThat(health.check(service(FencingGrpc.SERVICE_NAME)).getStatus()).isEqualTo(ServingStatus.SERVING);
    assertThat(FencingGrpc.SERVICE_NAME).isEqualTo("fencing.v1.Fencing");
    assertThat(health.check(service("")).getStatus()).isEqualTo(ServingStatus.SERVING);
    assertThatThrownBy(() -> health.check(service("no.such.Service")))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
  }

  @Test
  void healthWatchSeesNotServingWhenTheAgentClosesTheSocket() throws IOException {
    Path socket = dir.resolve("agent.sock");
    LocalApiServer server = startServer(socket);
    List<ServingStatus> seen = new CopyOnWriteArrayList<>();
    HealthGrpc.newStub(channel(socket)).watch(service(FencingGrpc.SERVICE_NAME),
        new StreamObserver<>() {
          @Override
          public void onNext(HealthCheckResponse r) {
            seen.add(r.getStatus());
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        });
    await().atMost(TIMEOUT).until(() -> seen.contains(ServingStatus.SERVING));

    server.close();

    await().atMost(TIMEOUT).until(() -> seen.contains(ServingStatus.NOT_SERVING));
    assertThat(seen).containsExactly(ServingStatus.SERVING, ServingStatus.NOT_SERVING);
  }

  @Test
  void reflectionListsTheServicesAndServesTheFencingDescriptorWithoutTheProto() throws Exception {
    Path socket = dir.resolve("agent.sock");
    startServer(socket);
    ServerReflectionGrpc.ServerReflectionStub reflection = ServerReflectionGrpc.newStub(channel(socket));

    ServerReflectionResponse list = reflect(reflection,
        ServerReflectionRequest.newBuilder().setListServices("").build());
    assertThat(list.getListServicesResponse().getServiceList()).extracting(ServiceResponse::getName)
        .containsExactlyInAnyOrder("fencing.v1.Fencing", "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection");

    ServerReflectionResponse files = reflect(reflection,
        ServerReflectionRequest.newBuilder().setFileContainingSymbol("fencing.v1.Fencing").build());
    List<FileDescriptorProto> descriptors = new ArrayList<>();
    for (var bytes : files.getFileDescriptorResponse().getFileDescriptorProtoList()) {
      descriptors.add(parse(bytes.toByteArray()));
    }
    FileDescriptorProto fencing = descriptors.stream()
        .filter(f -> f.getName().equals("fencing/v1/fencing.proto")).findFirst().orElseThrow();
    assertThat(fencing.getService(0).getMethodList()).extracting(m -> m.getName())
        .contains("GetAll", "StreamEvents", "GetStatus");
  }

  private static FileDescriptorProto parse(byte[] bytes) throws InvalidProtocolBufferException {
    return FileDescriptorProto.parseFrom(bytes);
  }

  // one request on a reflection stream, its one response
  private static ServerReflectionResponse reflect(ServerReflectionGrpc.ServerReflectionStub stub,
      ServerReflectionRequest request) throws Exception {
    CompletableFuture<ServerReflectionResponse> response = new CompletableFuture<>();
    StreamObserver<ServerReflectionRequest> requests = stub.withDeadlineAfter(10, TimeUnit.SECONDS)
        .serverReflectionInfo(new StreamObserver<>() {
          @Override
          public void onNext(ServerReflectionResponse r) {
            response.complete(r);
          }

          @Override
          public void onError(Throwable t) {
            response.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {
            response.completeExceptionally(new IllegalStateException("reflection stream ended without a response"));
          }
        });
    requests.onNext(request);
    requests.onCompleted();
    return response.get(10, TimeUnit.SECONDS);
  }
}
