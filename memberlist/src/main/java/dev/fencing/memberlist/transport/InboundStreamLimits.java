package dev.fencing.memberlist.transport;

import java.time.Duration;

/**
 * Caps on the inbound TCP streams of {@link NioTransport}: how many may be open at once (a connection beyond that is
 * closed as soon as it is accepted, before anything is read or allocated for it) and how long one may live from its
 * accept, however slowly its bytes trickle in (a stream handler may shorten that deadline, never extend it).
 *
 * @param maxInboundStreams inbound connections open at once
 * @param streamDeadline lifetime of an inbound connection, measured from its accept
 */
public record InboundStreamLimits(int maxInboundStreams, Duration streamDeadline) {
  /** Default {@link #maxInboundStreams}: push/pulls and TCP pings of a group are short and rare. */
  public static final int DEFAULT_MAX_INBOUND_STREAMS = 16;
  /** Default {@link #streamDeadline}: memberlist's LAN {@code TCPTimeout}. */
  public static final Duration DEFAULT_STREAM_DEADLINE = Duration.ofSeconds(10);

  /** Both caps must be positive. */
  public InboundStreamLimits {
    if (maxInboundStreams < 1) {
      throw new IllegalArgumentException("maxInboundStreams must be >= 1, was " + maxInboundStreams);
    }
    if (streamDeadline == null || streamDeadline.isZero() || streamDeadline.isNegative()) {
      throw new IllegalArgumentException("the inbound stream deadline must be > 0, was " + streamDeadline);
    }
  }

  /** The default caps. */
  public static InboundStreamLimits defaults() {
    return new InboundStreamLimits(DEFAULT_MAX_INBOUND_STREAMS, DEFAULT_STREAM_DEADLINE);
  }
}
