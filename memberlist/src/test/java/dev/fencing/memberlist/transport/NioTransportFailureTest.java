package dev.fencing.memberlist.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Receive and accept loops after failures that do not come from a close. */
class NioTransportFailureTest {

  static final long MS = 1_000_000L;

  @Test
  void failuresPauseLongerEachTimeUpToTheCapAndASuccessStartsOver() {
    FailureBackoff b = new FailureBackoff();
    assertThat(b.failing()).isFalse();
    long[] pauses = new long[10];
    for (int i = 0; i < pauses.length; i++) {
      pauses[i] = b.failed(i * MS).pauseNanos();
    }
    assertThat(pauses).containsExactly(5 * MS, 10 * MS, 20 * MS, 40 * MS, 80 * MS, 160 * MS, 320 * MS, 640 * MS,
        1_000 * MS, 1_000 * MS);
    assertThat(b.failing()).isTrue();
    b.succeeded();
    assertThat(b.failing()).isFalse();
    assertThat(b.failed(20 * MS).pauseNanos()).as("a new run starts short").isEqualTo(5 * MS);
  }

  @Test
  void aRunOfFailuresIsLoggedFirstThenAtMostOncePerIntervalWithTheCountLeftOut() {
    FailureBackoff b = new FailureBackoff();
    FailureBackoff.Step first = b.failed(0);
    assertThat(first.log()).isTrue();
    assertThat(first.unlogged()).isZero();
    for (int i = 1; i <= 7; i++) {
      assertThat(b.failed(i * 1_000 * MS).log()).as("failure at %d s", i).isFalse();
    }
    FailureBackoff.Step tenSeconds = b.failed(10_000 * MS);
    assertThat(tenSeconds.log()).isTrue();
    assertThat(tenSeconds.unlogged()).isEqualTo(7);
    assertThat(b.failed(10_500 * MS).log()).isFalse();

    b.succeeded();
    FailureBackoff.Step again = b.failed(11_000 * MS);
    assertThat(again.log()).as("the first failure after a success is logged at once").isTrue();
    assertThat(again.unlogged()).isZero();
  }

  /**
   * A process out of file descriptors (EMFILE): every accept fails at once. The accept loop must neither keep a core
   * busy nor flood the log, and must accept a waiting connection once descriptors are free again.
   */
  @Test
  void anAcceptLoopWithoutDescriptorsPausesLogsOnceAndRecovers(@TempDir File dir) throws Exception {
    File stderr = new File(dir, "stderr");
    String java = ProcessHandle.current().info().command().orElse("java");
    // A small descriptor limit, so the child runs out after a few hundred opens.
    Process child = new ProcessBuilder("sh", "-c", "ulimit -n 512 && exec \"$0\" \"$@\"", java, "-cp",
        System.getProperty("java.class.path"), AcceptWithoutDescriptors.class.getName())
        .redirectError(stderr).start();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        PrintWriter in = new PrintWriter(new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8),
            true)) {
      String line = out.readLine();
      assertThat(line).as("child's first line; its stderr: %s", stderr).startsWith("port=");
      int port = Integer.parseInt(line.substring("port=".length()));
      InetAddress loopback = InetAddress.getLoopbackAddress();
      try (Socket warmUp = new Socket(loopback, port)) {
        in.println("connected");
        assertThat(out.readLine()).startsWith("exhausted=");
        try (Socket second = new Socket(loopback, port); Socket third = new Socket(loopback, port)) {
          in.println("connected");
          String result = out.readLine();
          String errors = Files.readString(stderr.toPath());
          String errorsShown = errors.length() > 2_000 ? errors.substring(0, 2_000) + "…" : errors;
          assertThat(result).as("child's result; its stderr: %s", errorsShown)
              .matches("accept_cpu_ms=\\d+ accepted=\\d+");
          List<String> failures = errors.lines().filter(l -> l.contains("event=tcp_accept_failed")).toList();
          assertThat(failures).as("logged once in two seconds of failing accepts; stderr: %s", errorsShown).hasSize(1);
          assertThat(failures.get(0)).contains("Too many open files").contains("retry_in_ms=5");
          // A loop that retries at once keeps the core busy for all of the two seconds.
          long cpuMs = Long.parseLong(result.replaceAll("accept_cpu_ms=(\\d+).*", "$1"));
          assertThat(cpuMs).as("accept thread's CPU time over 2 s of failing accepts (ms)").isLessThan(500);
          assertThat(result).as("the waiting connection is accepted once descriptors are free").endsWith("accepted=3");
        }
      }
    } finally {
      if (!child.waitFor(30, TimeUnit.SECONDS)) {
        child.destroyForcibly();
      }
    }
    assertThat(child.exitValue()).isZero();
  }
}
