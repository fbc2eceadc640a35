package dev.fencing.agent.config;

import java.util.List;

/** A configuration file could not be used; {@link #problems()} lists every problem with its place and the fix. */
public final class ConfigException extends Exception {

  private static final long serialVersionUID = 1L;

  private final List<String> problems;

  public ConfigException(String source, List<String> problems) {
    super(source + " is not a usable agent configuration:\n  " + String.join("\n  ", problems));
    this.problems = List.copyOf(problems);
  }

  /** One line per problem: {@code [line L, column C: ]field: what is wrong and what to change}. */
  public List<String> problems() {
    return problems;
  }
}
