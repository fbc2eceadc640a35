package dev.fencing.agent.disk;

/** A sector read from the shared disk does not hold what SBD's layout says it should (never fatal to the agent). */
public final class MalformedSectorException extends Exception {

  private static final long serialVersionUID = 1L;

  public MalformedSectorException(String message) {
    super(message);
  }
}
