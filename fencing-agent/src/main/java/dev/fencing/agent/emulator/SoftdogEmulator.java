package dev.fencing.agent.emulator;

import dev.fencing.policy.DurationFormat;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code softdog-emulator}: runs an {@link EmulatedWatchdog} on a FIFO until SIGTERM/SIGINT. Also the
 * {@code softdog-emulator} subcommand of {@code fencing-agent}.
 *
 * <p>Exit codes: 1 the FIFO or events file could not be set up, 2 invalid options; otherwise it runs until a signal
 * ends it (the JVM exits 143 on SIGTERM, 130 on SIGINT) after recording {@code stopped}.
 */
@Command(
    name = "softdog-emulator",
    mixinStandardHelpOptions = true,
    description = {
      "Emulate the Linux softdog on a FIFO, for tests and demos.",
      "A writer opening the FIFO arms the timer, every byte feeds it,",
      "'V' as the last byte before close disarms it (unless --nowayout), and when it expires the reset command",
      "runs once. Prints one JSON line per event: started, armed, feed, reopen, closed, disarmed, reset,",
      "reset-exit, stopped."
    },
    exitCodeListHeading = "Exit codes:%n",
    exitCodeList = {
      "1:the FIFO or the events file could not be set up",
      "2:invalid options",
      "143:stopped by SIGTERM (130: SIGINT), after recording 'stopped'"
    })
public final class SoftdogEmulator implements Callable<Integer> {

  @Option(names = "--fifo", required = true, paramLabel = "PATH",
      description = "FIFO the agent opens as its watchdog device; created if missing")
  Path fifo;

  @Option(names = "--timeout", required = true, paramLabel = "DURATION", converter = DurationConverter.class,
      description = "time without a feed before the reset, e.g. 10s, 1500ms")
  Duration timeout;

  @Option(names = "--nowayout", description = "a magic close ('V') does not stop the timer")
  boolean nowayout;

  @Option(names = "--reset-command", required = true, paramLabel = "CMD",
      description = "run with sh -c when the timer expires, e.g. 'kill -9 $(cat /run/agent-a.pid)'")
  String resetCommand;

  @Option(names = "--events-file", paramLabel = "PATH", description = "also append the JSON event lines here")
  Path eventsFile;

  @Spec CommandSpec spec;

  /** Runs the emulator from the command line. */
  public static void main(String[] args) {
    System.exit(new CommandLine(new SoftdogEmulator()).execute(args));
  }

  @Override
  public Integer call() {
    WatchdogEventLog log;
    try {
      log = new WatchdogEventLog(System.out, eventsFile, InstantSource.system());
    } catch (IOException e) {
      spec.commandLine().getErr().println("softdog-emulator: cannot open events file " + eventsFile + ": "
          + e.getMessage());
      return 1;
    }
    EmulatedWatchdog watchdog = new EmulatedWatchdog(fifo, timeout, nowayout, resetCommand, log);
    try {
      watchdog.start();
    } catch (IOException e) {
      spec.commandLine().getErr().println("softdog-emulator: " + e.getMessage());
      log.close();
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Thread hook = new Thread(() -> {
      watchdog.close();
      log.close();
      stopped.countDown();
    }, "softdog-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }

  /** Parses Kubernetes-style durations ("10s", "1500ms", "1m30s") for --timeout. */
  public static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      try {
        Duration d = DurationFormat.parse(value);
        if (d.isZero()) {
          throw new CommandLine.TypeConversionException("duration must be positive, got '" + value + "'");
        }
        return d;
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException(e.getMessage());
      }
    }
  }
}
