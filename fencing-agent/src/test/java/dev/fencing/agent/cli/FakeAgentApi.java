package dev.fencing.agent.cli;

import dev.fencing.agent.api.EventHub;
import dev.fencing.agent.api.LocalApiServer;
import dev.fencing.proto.fencing.v1.AgentStatus;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;

/** A real LocalApiServer on a Unix socket, answering GetStatus with the status a test sets, for the CLI tests. */
final class FakeAgentApi implements AutoCloseable {

  /** What GetStatus answers. */
  final AtomicReference<AgentStatus> status = new AtomicReference<>();
  /** The socket it serves. */
  final Path socket;
  private final LocalApiServer server;

  /** Serves on {@code dir/agent.sock}. */
  FakeAgentApi(Path dir) throws IOException {
    socket = dir.resolve("agent.sock");
    server = new LocalApiServer(socket, new EventHub(16, InstantSource.fixed(Instant.EPOCH)), status::get);
    server.start();
  }

  @Override
  public void close() {
    server.close();
  }
}
