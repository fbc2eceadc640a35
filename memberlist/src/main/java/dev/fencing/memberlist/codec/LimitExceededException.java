package dev.fencing.memberlist.codec;

import dev.fencing.memberlist.limits.Limit;

/**
 * Input refused because it would exceed a resource cap ({@link WireLimits}), detected before the memory is
 * allocated. The codec that throws it has already counted and logged it (rate-limited, {@link
 * dev.fencing.memberlist.limits.Refusals}); callers drop the input like any other malformed message.
 */
public final class LimitExceededException extends MalformedMessageException {
  private static final long serialVersionUID = 1L;

  private final transient Limit limit;

  /**
   * @param limit the cap that was hit
   * @param message what exceeded it and by how much
   */
  public LimitExceededException(Limit limit, String message) {
    super(message + " (" + limit.configField() + ")");
    this.limit = limit;
  }

  /** The cap that was hit. */
  public Limit limit() {
    return limit;
  }
}
