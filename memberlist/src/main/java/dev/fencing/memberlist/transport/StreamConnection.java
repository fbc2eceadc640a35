package dev.fencing.memberlist.transport;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.time.Duration;

/** One bidirectional byte stream (a TCP connection, or its in-memory equivalent). */
public interface StreamConnection extends Closeable {
  InputStream input() throws IOException;

  OutputStream output() throws IOException;

  InetSocketAddress remoteAddress();

  /** Reads and writes after this much time from now fail with an IOException. */
  void setDeadline(Duration fromNow) throws IOException;

  @Override
  void close() throws IOException;
}
