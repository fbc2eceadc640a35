package dev.fencing.memberlist.transport;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.time.Duration;

/** One bidirectional byte stream (a TCP connection, or its in-memory equivalent). */
public interface StreamConnection extends Closeable {
  /** The bytes the peer sends; buffered, so read it through one stream per connection. */
  InputStream input() throws IOException;

  /** The bytes sent to the peer; flush after a message. */
  OutputStream output() throws IOException;

  /** The peer's address (the dialed address, or the connecting socket's address for inbound streams). */
  InetSocketAddress remoteAddress();

  /** Reads and writes after this much time from now fail with an IOException. */
  void setDeadline(Duration fromNow) throws IOException;

  /**
   * Says that the peer's first message arrived in full and passed every check of the codec (label, key, framing):
   * an inbound stream keeps its slot from now on, where until then a newcomer may take it when all slots are held
   * (see {@link InboundStreamLimits}). Idempotent; nothing for an outbound stream.
   */
  void markEstablished();

  /**
   * Where the codec reserves room for an encrypted frame of the peer's first message before reading it: the
   * transport's shared budget for an inbound stream ({@link InboundStreamLimits#maxInboundFrameBytes()}), none for
   * an outbound one or a transport that bounds nothing.
   */
  default dev.fencing.memberlist.codec.FrameBudget frameBudget() {
    return dev.fencing.memberlist.codec.FrameBudget.UNLIMITED;
  }

  /** Closes both directions; idempotent. */
  @Override
  void close() throws IOException;
}
