package dev.fencing.memberlist.codec;

/**
 * Input from the network that is not a valid memberlist message: truncated, wrongly typed, over a size cap, failing
 * its checksum or authentication. Expected at runtime; callers log it (without a stack trace) and drop the input.
 * It carries no stack trace: anyone on the node network can make the receive thread throw one per datagram, and
 * filling in a trace cost more than the rest of refusing a small forged packet.
 */
public sealed class MalformedMessageException extends Exception permits LimitExceededException {
  private static final long serialVersionUID = 1L;

  /** @param message what was wrong, precise enough to recognise the offending field or layer */
  public MalformedMessageException(String message) {
    super(message, null, false, false);
  }

  /** @param message what was wrong; {@code cause} the underlying failure (e.g. a GCM tag mismatch) */
  public MalformedMessageException(String message, Throwable cause) {
    super(message, cause, false, false);
  }
}
