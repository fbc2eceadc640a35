package dev.fencing.memberlist.transport;

import java.time.Duration;

/**
 * Caps on the inbound TCP streams of {@link NioTransport}: how many may be open at once, and how long one may live
 * from its accept, however slowly its bytes trickle in (a stream handler may shorten that deadline, never extend it).
 *
 * <p>When {@code maxInboundStreams} are open, a new connection closes the oldest stream whose first message has not
 * been read in full and passed the codec's checks ({@link StreamConnection#markEstablished}) and takes its slot, so
 * idle or keyless connections cannot lock members out of push/pull, join and TCP pings. If every open stream has
 * delivered its first message, the new connection is closed as soon as it is accepted, before anything is read or
 * allocated for it. Either way at most {@code maxInboundStreams} partial messages are held.
 *
 * <p>Encrypted frames are read whole before they can be authenticated, so what they hold is capped over all streams
 * together: a frame reserves its announced length from {@code maxInboundFrameBytes} when its 5-byte header arrives
 * and gives it back once decrypted (in place) and decoded. When it does not fit, the oldest stream holding a
 * reservation is closed to make room (as for slots: a member's frame arrives at once, a stranger's never
 * authenticates), and the frame is refused if no room frees within {@link #FRAME_BUDGET_WAIT}. So sixteen keyless
 * streams releasing the last byte of a 1 MiB frame together hold at most this budget, not 16 frames plus 16
 * plaintexts.
 *
 * @param maxInboundStreams inbound connections open at once
 * @param streamDeadline lifetime of an inbound connection, measured from its accept
 * @param maxInboundFrameBytes bytes of encrypted inbound frames held at once over all inbound streams; at least the
 *     largest frame accepted ({@code Config.maxStreamMessageBytes})
 */
public record InboundStreamLimits(int maxInboundStreams, Duration streamDeadline, int maxInboundFrameBytes) {
  /** Default {@link #maxInboundStreams}: push/pulls and TCP pings of a group are short and rare. */
  public static final int DEFAULT_MAX_INBOUND_STREAMS = 16;
  /** Default {@link #streamDeadline}: memberlist's LAN {@code TCPTimeout}. */
  public static final Duration DEFAULT_STREAM_DEADLINE = Duration.ofSeconds(10);
  /**
   * Default {@link #maxInboundFrameBytes}: 4 MiB, four frames of the 1 MiB stream cap, or six push/pulls of a
   * 1000-member group with full metadata (about 645 KiB encrypted, uncompressed), about 6 % of the agent's 64 MiB heap.
   */
  public static final int DEFAULT_MAX_INBOUND_FRAME_BYTES = 4 << 20;
  /** How long a frame that does not fit waits for room, after closing streams to make it, before it is refused. */
  public static final Duration FRAME_BUDGET_WAIT = Duration.ofSeconds(1);

  /** The caps with the default {@link #maxInboundFrameBytes}. */
  public InboundStreamLimits(int maxInboundStreams, Duration streamDeadline) {
    this(maxInboundStreams, streamDeadline, DEFAULT_MAX_INBOUND_FRAME_BYTES);
  }

  /** Every cap must be positive. */
  public InboundStreamLimits {
    if (maxInboundStreams < 1) {
      throw new IllegalArgumentException("maxInboundStreams must be >= 1, was " + maxInboundStreams);
    }
    if (streamDeadline == null || streamDeadline.isZero() || streamDeadline.isNegative()) {
      throw new IllegalArgumentException("the inbound stream deadline must be > 0, was " + streamDeadline);
    }
    if (maxInboundFrameBytes < 1) {
      throw new IllegalArgumentException("maxInboundFrameBytes must be >= 1, was " + maxInboundFrameBytes);
    }
  }

  /** The default caps. */
  public static InboundStreamLimits defaults() {
    return new InboundStreamLimits(DEFAULT_MAX_INBOUND_STREAMS, DEFAULT_STREAM_DEADLINE, DEFAULT_MAX_INBOUND_FRAME_BYTES);
  }
}
