package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.cli.FencingAgentCli;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code run --log-level} / {@code --log-format}: a bad value stops {@code run} before anything starts. */
class RunLogFlagsTest {

  private record Result(int code, String err) {}

  private static Result run(String... args) {
    StringWriter err = new StringWriter();
    CommandLine cli = FencingAgentCli.commandLine();
    cli.setErr(new PrintWriter(err, true));
    cli.setOut(new PrintWriter(new StringWriter(), true));
    return new Result(cli.execute(args), err.toString());
  }

  @Test
  void anUnknownLevelIsRejectedWithExitCode2NamingTheAcceptedLevels() {
    Result r = run("run", "--node", "a", "--controller", "127.0.0.1:1", "--log-level", "verbose");

    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("run: --log-level verbose: expected one of error|warn|info|debug|trace");
  }

  @Test
  void aBadPerLoggerLevelIsRejectedWithExitCode2() {
    Result r = run("run", "--node", "a", "--controller", "127.0.0.1:1", "--log-level", "info,dev.fencing=loud");

    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("run: --log-level dev.fencing=loud: expected one of");
  }

  @Test
  void anUnknownFormatIsRejectedWithExitCode2() {
    Result r = run("run", "--node", "a", "--controller", "127.0.0.1:1", "--log-format", "xml");

    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("run: --log-format xml: expected text or json");
  }
}
