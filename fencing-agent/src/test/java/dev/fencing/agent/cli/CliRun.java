package dev.fencing.agent.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/**
 * One CLI run's exit code and output, for the CLI tests.
 *
 * @param code the exit code
 * @param out what it printed on stdout
 * @param err what it printed on stderr
 */
record CliRun(int code, String out, String err) {

  /** Runs {@code fencing-agent ARGS} as the jar's main would, capturing its output. */
  static CliRun of(String... args) {
    return of(FencingAgentCli.commandLine().getCommand(), args);
  }

  /** Runs {@code command} (a picocli command object, e.g. one with test defaults) with {@code args}. */
  static CliRun of(Object command, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(command);
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int code = cli.execute(args);
    return new CliRun(code, out.toString(), err.toString());
  }
}
