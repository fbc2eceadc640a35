package dev.fencing.agent.quorum;

/** A user message carried the heartbeat magic but its content could not be decoded; the message is dropped. */
public final class MalformedHeartbeatException extends Exception {

  private static final long serialVersionUID = 1L;

  public MalformedHeartbeatException(String message) {
    super(message);
  }
}
