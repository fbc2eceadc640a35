package dev.fencing.agent.cli;

import com.google.protobuf.Empty;
import dev.fencing.agent.emulator.SoftdogEmulator;
import dev.fencing.proto.fencing.v1.Event;
import dev.fencing.proto.fencing.v1.FencingGrpc;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code fencing-agent events}: follows StreamEvents. The stream opens with one JOIN per current member (source
 * "snapshot"), then prints every change as it happens, until Ctrl-C, {@code --count} events or {@code --timeout}.
 */
@Command(name = "events", mixinStandardHelpOptions = true,
    description = {
      "Follow membership events: a JOIN per current member, then live changes.",
      "The stream opens with one JOIN per current member (source snapshot), then prints live JOIN/LEFT changes",
      "until Ctrl-C, --count or --timeout. With --json, one JSON object per line."
    },
    exitCodeListHeading = "Exit codes:%n",
    exitCodeList = {
      "0:--count reached, --timeout elapsed or the agent ended the stream",
      "1:the agent answered with an error",
      "3:no agent at the socket, or it went away",
      "4:the agent dropped the stream because this client fell behind (run again to resync)"
    })
public final class EventsCommand implements Callable<Integer> {

  @Mixin AgentSocketOptions options = new AgentSocketOptions();
  @Spec CommandSpec spec;

  @Option(names = "--count", paramLabel = "N", description = "stop after N events (snapshot JOINs included)")
  Long count;

  @Option(names = "--timeout", paramLabel = "DURATION", converter = SoftdogEmulator.DurationConverter.class,
      description = "stop after this long, e.g. 30s")
  Duration timeout;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (count != null && count < 1) {
      err.println("--count must be at least 1, got " + count);
      return ExitCodes.USAGE;
    }
    try (AgentConnection agent = AgentConnection.open(options.socket(), err)) {
      if (agent == null) {
        return ExitCodes.NO_AGENT;
      }
      Context.CancellableContext context = Context.current().withCancellation();
      ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "events-timeout");
        t.setDaemon(true);
        return t;
      });
      try {
        if (timeout != null) {
          timer.schedule(() -> context.cancel(null), timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        return context.call(() -> follow(agent, out, err));
      } catch (Exception e) {
        err.println("events: " + e.getMessage());
        return ExitCodes.AGENT_ERROR;
      } finally {
        timer.shutdownNow();
        context.cancel(null);
      }
    }
  }

  private int follow(AgentConnection agent, PrintWriter out, PrintWriter err) {
    long printed = 0;
    try {
      Iterator<Event> events = FencingGrpc.newBlockingStub(agent.channel()).streamEvents(Empty.getDefaultInstance());
      while (events.hasNext()) {
        Event e = events.next();
        out.println(options.json ? ProtoJson.line(e) : line(e));
        out.flush();
        printed++;
        if (count != null && printed >= count) {
          return ExitCodes.OK;
        }
      }
      return ExitCodes.OK;
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() == Status.Code.CANCELLED && Context.current().isCancelled()) {
        return ExitCodes.OK; // --timeout elapsed
      }
      return agent.fail(e, err);
    }
  }

  /** {@code 2026-11-22T10:00:00Z  JOIN  node-a  InternalIP=198.18.0.1  source=snapshot}. */
  static String line(Event e) {
    String type = e.getType().name();
    return HumanFormat.time(e.getTime()) + "  " + type + " ".repeat(Math.max(1, 6 - type.length()))
        + e.getNode().getName() + "  " + HumanFormat.addresses(e.getNode().getAddressesMap())
        + (e.hasSourceName() ? "  source=" + e.getSourceName() : "");
  }
}
