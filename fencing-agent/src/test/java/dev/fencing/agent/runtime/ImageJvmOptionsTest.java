package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The image's launcher options ({@code src/main/image/jvm.options}) do what they are there for. The system property
 * that keeps gRPC's shaded Netty from emitting JFR buffer events must carry the relocated name, or Netty ignores it
 * and loads JDK Flight Recorder in every agent (3–4 MiB of idle RSS; bench/REPORT.md, "controller mode").
 */
class ImageJvmOptionsTest {

  private static final Path OPTIONS = Path.of("src/main/image/jvm.options");

  /** Prints what the shaded Netty decided: run in a child JVM, as the property is read once at class init. */
  public static final class PrintJfr {
    public static void main(String[] args) {
      System.out.println("jfr=" + io.grpc.netty.shaded.io.netty.util.internal.PlatformDependent.isJfrEnabled());
    }
  }

  @Test
  void theSystemPropertiesOfTheImageTurnOffNettysFlightRecorderEvents() throws Exception {
    List<String> properties = imageOptions(l -> l.startsWith("-D"));
    assertThat(properties).contains("-Dio.grpc.netty.shaded.io.netty.jfr.enabled=false");

    assertThat(childSays(properties)).isEqualTo("jfr=false");
    // Without them Netty would use JFR on this JDK: the property is what turns it off.
    assertThat(childSays(List.of())).isEqualTo("jfr=true");
  }

  /** A loop that never returns, as in a worker thread: 2 000 rounds, each calling a method that is soon compiled. */
  public static final class LongLoop {
    public static void main(String[] args) {
      long sum = 0;
      for (int round = 0; round < 2_000; round++) {
        sum += step(round);
      }
      System.out.println("sum=" + sum);
    }

    static long step(int round) {
      return round % 7;
    }
  }

  @Test
  void theImageCompilesTheLoopOfALongRunningThreadAfterHundredsOfRoundsNotTensOfThousands() throws Exception {
    // The loops of the agent's threads (executors' workers, the UDP receive loop, the event loops) never return, so
    // their own bytecode runs in the interpreter until an on-stack replacement: 60 000 rounds by default, hours at
    // an idle agent's 10 rounds a second.
    List<String> osr = imageOptions(
        l -> l.startsWith("-XX:Tier0BackedgeNotifyFreqLog=") || l.startsWith("-XX:Tier3BackEdgeThreshold="));
    assertThat(osr).containsExactly("-XX:Tier0BackedgeNotifyFreqLog=7", "-XX:Tier3BackEdgeThreshold=500");

    assertThat(replacedOnStack(osr)).as("with the image's options").isTrue();
    assertThat(replacedOnStack(List.of())).as("with the JVM's defaults").isFalse();
  }

  /** Whether a C1-only child JVM compiled {@link LongLoop#main}'s loop while it ran (compiles are synchronous). */
  private static boolean replacedOnStack(List<String> options) throws IOException, InterruptedException {
    List<String> jvm = new ArrayList<>(List.of("-XX:TieredStopAtLevel=1", "-Xbatch", "-XX:+PrintCompilation"));
    jvm.addAll(options);
    String out = runChild(jvm, LongLoop.class);
    assertThat(out).contains("sum=5995");
    // PrintCompilation marks an on-stack replacement with '%' and names the method.
    return out.lines().anyMatch(l -> l.contains("%") && l.contains("ImageJvmOptionsTest$LongLoop::main"));
  }

  /** Prints how often the JVM's monitor deflation thread woke up in 3 s of an otherwise idle JVM. */
  public static final class CountDeflationWakeups {
    public static void main(String[] args) throws Exception {
      Path task = null;
      try (var tasks = Files.list(Path.of("/proc/self/task"))) {
        for (Path t : tasks.toList()) {
          if (Files.readString(t.resolve("comm")).startsWith("Monitor Deflati")) {
            task = t;
          }
        }
      }
      long before = voluntarySwitches(task);
      Thread.sleep(3_000);
      System.out.println("wakeups=" + (voluntarySwitches(task) - before));
    }

    private static long voluntarySwitches(Path task) throws IOException {
      return Files.readAllLines(task.resolve("status")).stream().filter(l -> l.startsWith("voluntary_ctxt_switches"))
          .mapToLong(l -> Long.parseLong(l.substring(l.indexOf(':') + 1).trim())).findFirst().orElseThrow();
    }
  }

  @Test
  void theImageWakesTheMonitorDeflationThreadOnceASecondInsteadOfFourTimes() throws Exception {
    // Deflating idle monitors a little later costs nothing; the JVM's 250 ms check is 4 wakeups a second of an idle
    // agent. The interval is a diagnostic flag, so the image must unlock those first.
    List<String> deflation = imageOptions(
        l -> l.equals("-XX:+UnlockDiagnosticVMOptions") || l.startsWith("-XX:AsyncDeflationInterval="));
    assertThat(deflation).containsExactly("-XX:+UnlockDiagnosticVMOptions", "-XX:AsyncDeflationInterval=1000");

    long image = wakeups(runChild(deflation, CountDeflationWakeups.class));
    long defaults = wakeups(runChild(List.of(), CountDeflationWakeups.class));
    assertThat(defaults).as("with the JVM's defaults (every 250 ms)").isGreaterThanOrEqualTo(6);
    assertThat(image).as("with the image's options (every second)").isLessThanOrEqualTo(defaults / 2);
  }

  @Test
  void theImageGivesFreedNativeMemoryBackOnceAMinute() throws Exception {
    // glibc keeps what the JVM frees (C1's arenas after each compile, buffers of startup) for reuse; a periodic trim
    // hands it back: 2.5 MiB of an idle agent's RSS (bench/REPORT.md). The trimmer thread wakes once a minute.
    List<String> trim = imageOptions(l -> l.startsWith("-XX:TrimNativeHeapInterval="));
    assertThat(trim).containsExactly("-XX:TrimNativeHeapInterval=60000");

    List<String> jvm = new ArrayList<>(trim);
    jvm.add("-Xlog:trimnative");
    assertThat(runChild(jvm, PrintJfr.class)).contains("Periodic native trim enabled (interval: 60000 ms)");
    assertThat(runChild(List.of("-Xlog:trimnative"), PrintJfr.class)).doesNotContain("Periodic native trim enabled");
  }

  private static long wakeups(String out) {
    return out.lines().filter(l -> l.startsWith("wakeups=")).mapToLong(l -> Long.parseLong(l.substring(8)))
        .findFirst().orElseThrow(() -> new AssertionError("no count in: " + out));
  }

  private static String childSays(List<String> properties) throws IOException, InterruptedException {
    String out = runChild(properties, PrintJfr.class);
    return out.lines().filter(l -> l.startsWith("jfr=")).findFirst().orElse(out);
  }

  /** The image's launcher options that {@code wanted} picks, in file order. */
  private static List<String> imageOptions(Predicate<String> wanted) throws IOException {
    return Files.readAllLines(OPTIONS).stream().map(String::trim).filter(wanted).toList();
  }

  /** Runs {@code main} in a child JVM of this test's java and class path with {@code options}; its whole output. */
  private static String runChild(List<String> options, Class<?> main) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java")));
    command.addAll(options);
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    // Read before waiting: a child blocked on a full pipe would never finish.
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("child JVM finished").isTrue();
    return out;
  }
}
