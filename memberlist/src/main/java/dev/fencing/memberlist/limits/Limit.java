package dev.fencing.memberlist.limits;

/**
 * A resource cap that bounds what one peer can make this node allocate or hold. Each names the {@link
 * dev.fencing.memberlist.Config} field that sets it, so a log line tells the operator which knob was hit.
 */
public enum Limit {
  /** Wire bytes of one TCP stream message: the encrypted frame, or the plain or compressed message. */
  STREAM_MESSAGE_BYTES("maxStreamMessageBytes"),
  /** Node states declared by one push/pull. */
  PUSH_PULL_NODES("maxPushPullNodes"),
  /** Decoded bytes of one push/pull (header, node states and user state). */
  PUSH_PULL_STATE_BYTES("maxPushPullStateBytes"),
  /** User state of one push/pull, or one reliable (stream) user message. */
  USER_STATE_BYTES("maxUserStateBytes"),
  /** LZW output of one packet or stream message, summed over all its compressed layers. */
  DECOMPRESSED_BYTES("maxDecompressedBytes"),
  /** Compound parts of one packet, summed over all its compound layers. */
  COMPOUND_PARTS("maxCompoundParts"),
  /** Compound and compressed layers nested in one packet. */
  NESTING_DEPTH("maxNestingDepth"),
  /**
   * Inbound TCP streams open at once; when all are open, a new connection replaces the oldest one still without a
   * complete first message, or is closed as soon as it is accepted if every one has delivered its first message.
   */
  INBOUND_STREAMS("maxInboundStreams"),
  /**
   * Bytes of encrypted inbound stream frames held in memory at once, over all inbound streams, from the frame header
   * until it is decrypted and decoded; when a frame does not fit, the oldest stream still reading a frame is closed to
   * make room, or the frame is refused from its header if none frees room in time.
   */
  INBOUND_FRAME_BYTES("maxInboundFrameBytes"),
  /** Lifetime of an inbound TCP stream from its accept, however slowly its bytes arrive. */
  STREAM_DEADLINE("tcpTimeout");

  private final String configField;

  Limit(String configField) {
    this.configField = configField;
  }

  /** The {@link dev.fencing.memberlist.Config} field that sets this cap. */
  public String configField() {
    return configField;
  }
}
