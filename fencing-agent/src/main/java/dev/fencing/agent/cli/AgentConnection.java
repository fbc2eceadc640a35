package dev.fencing.agent.cli;

import dev.fencing.agent.api.LocalApiChannel;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** A client's channel to the agent's socket, and how a failed call becomes a message and an exit code. */
final class AgentConnection implements AutoCloseable {

  private final Path socket;
  private final ManagedChannel channel;

  private AgentConnection(Path socket) {
    this.socket = socket;
    this.channel = LocalApiChannel.open(socket);
  }

  /** Opens a connection, or returns null after printing "no agent" when the socket file does not exist. */
  static AgentConnection open(Path socket, PrintWriter err) {
    if (!Files.exists(socket)) {
      err.println(noAgent(socket));
      return null;
    }
    return new AgentConnection(socket);
  }

  ManagedChannel channel() {
    return channel;
  }

  static String noAgent(Path socket) {
    return "no agent at " + socket + ": is fencing-agent running? (--socket to choose another)";
  }

  /** Prints what went wrong and returns the exit code for it. */
  int fail(StatusRuntimeException e, PrintWriter err) {
    Status status = e.getStatus();
    String detail = status.getDescription() == null ? status.getCode().toString() : status.getDescription();
    switch (status.getCode()) {
      case UNAVAILABLE, DEADLINE_EXCEEDED -> {
        err.println(noAgent(socket) + " [" + detail + "]");
        return ExitCodes.NO_AGENT;
      }
      case RESOURCE_EXHAUSTED -> {
        err.println("the agent dropped this event stream because the client fell behind: " + detail);
        return ExitCodes.STREAM_DROPPED;
      }
      default -> {
        err.println("the agent at " + socket + " answered " + status.getCode() + ": " + detail);
        return ExitCodes.AGENT_ERROR;
      }
    }
  }

  @Override
  public void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
