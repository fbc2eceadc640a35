package dev.fencing.agent.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.EventType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * grpcurl (built from the Go module proxy by scripts/proto-tools, pinned in tools/proto) against the agent's socket,
 * with no .proto at hand: everything it knows comes from server reflection.
 */
class LocalApiGrpcurlIT {

  private static final Instant T0 = Instant.parse("2026-11-23T10:00:00Z");
  private static final long BUILD_TIMEOUT_MINUTES = 30;
  private static Path grpcurl;

  @TempDir Path dir;
  private LocalApiServer server;
  private Path socket;

  @BeforeAll
  static void locateGrpcurl() throws Exception {
    grpcurl = protoTools().resolve("grpcurl");
    assertThat(grpcurl).as("grpcurl from scripts/proto-tools").isExecutable();
  }

  @BeforeEach
  void startAgentApi() throws IOException {
    EventHub hub = new EventHub(16, InstantSource.fixed(T0));
    hub.publish(EventType.JOIN, "node-a", Map.of("InternalIP", "198.18.0.1"), T0, "gossip");
    socket = dir.resolve("agent.sock");
    server = new LocalApiServer(socket, hub, () -> AgentStatus.newBuilder().setNode("node-a").build());
    server.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void listShowsTheFencingHealthAndReflectionServicesWithoutTheProto() throws Exception {
    String out = grpcurl(null, "list");
    assertThat(out.lines().toList())
        .containsExactlyInAnyOrder("fencing.v1.Fencing", "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection");
    assertThat(grpcurl(null, "describe", "fencing.v1.Event")).contains("sourceName = 4");
  }

  @Test
  void healthCheckAndGetAllAnswerThroughReflection() throws Exception {
    assertThat(grpcurl("{\"service\":\"fencing.v1.Fencing\"}", "grpc.health.v1.Health/Check"))
        .contains("\"status\": \"SERVING\"");
    assertThat(grpcurl(null, "fencing.v1.Fencing/GetAll")).contains("\"name\": \"node-a\"").contains("198.18.0.1");
  }

  // grpcurl -plaintext -max-time 20 [-d <request>] -unix <socket> <verb or method> [symbol], bounded to 30 s
  private String grpcurl(String request, String... verb) throws Exception {
    List<String> command = new ArrayList<>(List.of(grpcurl.toString(), "-plaintext", "-max-time", "20"));
    if (request != null) {
      command.addAll(List.of("-d", request));
    }
    command.addAll(List.of("-unix", socket.toString()));
    command.addAll(List.of(verb));
    return run(command, 30);
  }

  private static String run(List<String> command, long timeoutSeconds) throws Exception {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    process.getOutputStream().close();
    if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(command + " did not finish within " + timeoutSeconds + " s");
    }
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.exitValue()).as("%s exit code, output:%n%s", command, out).isZero();
    return out;
  }

  /** The directory scripts/proto-tools prints (it builds once into a cache; later runs only print it). */
  private static Path protoTools() throws Exception {
    Path root = Path.of("").toAbsolutePath();
    for (int i = 0; root != null && i < 8; i++, root = root.getParent()) {
      Path script = root.resolve("scripts").resolve("proto-tools");
      if (Files.isRegularFile(script)) {
        Process process = new ProcessBuilder("bash", script.toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        process.getOutputStream().close();
        if (!process.waitFor(BUILD_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
          process.destroyForcibly();
          throw new AssertionError(script + " did not finish within " + BUILD_TIMEOUT_MINUTES + " minutes");
        }
        String printed = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(process.exitValue()).as("%s exit code (its stderr is above)", script).isZero();
        return Path.of(printed.substring(printed.lastIndexOf('\n') + 1));
      }
    }
    throw new AssertionError("no scripts/proto-tools above " + Path.of("").toAbsolutePath());
  }
}
