package dev.fencing.agent.cli;

import com.google.protobuf.Message;
import dev.fencing.agent.api.LocalApiChannel;
import dev.fencing.proto.fencing.v1.FencingGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import picocli.CommandLine.Model.CommandSpec;

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

  /**
   * Runs one unary call against the agent and prints its answer: JSON with {@code --json}, else {@code human}.
   *
   * @return the exit code
   */
  static <M extends Message> int printUnary(AgentSocketOptions options, CommandSpec spec,
      Function<FencingGrpc.FencingBlockingStub, M> call, Function<M, String> human) {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try (AgentConnection agent = open(options.socket(), err)) {
      if (agent == null) {
        return ExitCodes.NO_AGENT;
      }
      M answer;
      try {
        answer = call.apply(FencingGrpc.newBlockingStub(agent.channel()).withDeadlineAfter(5, TimeUnit.SECONDS));
      } catch (StatusRuntimeException e) {
        return agent.fail(e, err);
      }
      out.print(options.json ? ProtoJson.pretty(answer) + "\n" : human.apply(answer));
      out.flush();
      return ExitCodes.OK;
    }
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
