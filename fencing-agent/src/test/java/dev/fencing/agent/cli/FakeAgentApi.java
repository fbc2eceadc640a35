package dev.fencing.agent.cli;

import dev.fencing.agent.api.EventHub;
import dev.fencing.agent.api.LocalApiServer;
import dev.fencing.proto.fencing.v1.AgentStatus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real LocalApiServer on a Unix socket, answering GetStatus with the status a test sets, for the CLI tests
 * ({@code @RegisterExtension}): started before each test in a fresh directory, closed after it.
 */
final class FakeAgentApi implements BeforeEachCallback, AfterEachCallback {

  /** What GetStatus answers. */
  final AtomicReference<AgentStatus> status = new AtomicReference<>();
  /** GetStatus calls answered since the test began. */
  final AtomicInteger statusCalls = new AtomicInteger();
  private Path dir;
  private LocalApiServer server;

  /** The socket it serves. */
  Path socket() {
    return dir.resolve("agent.sock");
  }

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    // Short path: a Unix socket path must fit in 108 bytes.
    dir = Files.createTempDirectory("agent-api");
    server = new LocalApiServer(socket(), new EventHub(16, InstantSource.fixed(Instant.EPOCH)), () -> {
      statusCalls.incrementAndGet();
      return status.get();
    });
    server.start();
  }

  @Override
  public void afterEach(ExtensionContext context) throws IOException {
    server.close();
    Files.deleteIfExists(socket());
    Files.deleteIfExists(dir);
  }
}
