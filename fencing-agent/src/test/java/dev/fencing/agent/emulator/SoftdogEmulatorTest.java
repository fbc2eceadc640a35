package dev.fencing.agent.emulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class SoftdogEmulatorTest {

  @TempDir Path dir;

  private int run(StringWriter err, String... args) {
    CommandLine cli = new CommandLine(new SoftdogEmulator());
    cli.setErr(new PrintWriter(err, true));
    return cli.execute(args);
  }

  @Test
  void invalidTimeoutIsAUsageErrorThatSaysWhatToWrite() {
    StringWriter err = new StringWriter();

    int code = run(err, "--fifo", dir.resolve("w").toString(), "--timeout", "ten", "--reset-command", "true");

    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).contains("--timeout").contains("e.g. 500ms");
  }

  @Test
  void missingResetCommandIsAUsageError() {
    StringWriter err = new StringWriter();

    int code = run(err, "--fifo", dir.resolve("w").toString(), "--timeout", "1s");

    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).contains("--reset-command");
  }

  @Test
  void fifoPathThatIsADirectoryFailsSetupWithExitCode1() throws Exception {
    Path taken = Files.createDirectory(dir.resolve("taken"));
    StringWriter err = new StringWriter();

    int code = run(err, "--fifo", taken.toString(), "--timeout", "1s", "--reset-command", "true");

    assertThat(code).isEqualTo(1);
    assertThat(err.toString()).contains("exists and is not a FIFO");
  }

  @Test
  void durationConverterAcceptsKubernetesDurations() {
    assertThat(new SoftdogEmulator.DurationConverter().convert("1m30s")).hasSeconds(90);
  }
}
