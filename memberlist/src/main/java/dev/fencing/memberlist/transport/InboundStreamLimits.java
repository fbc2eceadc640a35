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
