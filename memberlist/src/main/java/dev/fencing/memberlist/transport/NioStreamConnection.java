package dev.fencing.memberlist.transport;

import java.io.BufferedInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A TCP connection of {@link NioTransport}; the deadline closes it, failing blocked reads and writes. An inbound
 * connection also has a hard deadline set at its accept that {@link #setDeadline} cannot move later, and holds one of
 * the transport's slots: until {@link #markEstablished} the transport may take that slot for a newcomer ({@link
 * #giveUpSlot}), afterwards the connection gives it back when it closes.
 */
final class NioStreamConnection implements StreamConnection {
  /** Hard deadline of an outbound connection: none. */
  static final long NO_DEADLINE = Long.MAX_VALUE;

  /** An inbound connection's slot: held, first message not yet read; held for good; no longer held. */
  private enum Slot { AWAITING_FIRST_MESSAGE, ESTABLISHED, RELEASED }

  private final SocketChannel channel;
  private final NioTransport transport;
  private final long hardDeadlineNanos;
  private final InetSocketAddress remote;
  private final InputStream in;
  private final OutputStream out;
  private final AtomicBoolean closed = new AtomicBoolean();
  // one atomic for both events, so that a stream cannot be evicted after it was told it keeps its slot
  private final AtomicReference<Slot> slot = new AtomicReference<>(Slot.AWAITING_FIRST_MESSAGE);
  private final Object deadlineLock = new Object();
  private ScheduledFuture<?> deadline;
  private volatile boolean expired;

  // the socket adaptor streams, unlike Channels.newInputStream, let one thread read while another writes
  NioStreamConnection(SocketChannel channel, NioTransport transport, long hardDeadlineNanos) throws IOException {
    this.channel = channel;
    this.transport = transport;
    this.hardDeadlineNanos = hardDeadlineNanos;
    this.remote = (InetSocketAddress) channel.getRemoteAddress();
    this.in = new BufferedInputStream(new CountingInput(channel.socket().getInputStream()), 16 * 1024);
    this.out = new CountingOutput(channel.socket().getOutputStream());
  }

  @Override
  public InputStream input() {
    return in;
  }

  @Override
  public OutputStream output() {
    return out;
  }

  @Override
  public InetSocketAddress remoteAddress() {
    return remote;
  }

  private boolean inbound() {
    return hardDeadlineNanos != NO_DEADLINE;
  }

  @Override
  public dev.fencing.memberlist.codec.FrameBudget frameBudget() {
    if (!inbound()) {
      return dev.fencing.memberlist.codec.FrameBudget.UNLIMITED;
    }
    return new dev.fencing.memberlist.codec.FrameBudget() {
      @Override
      public boolean tryReserve(int bytes) {
        return transport.reserveFrame(NioStreamConnection.this, bytes);
      }

      @Override
      public void release(int bytes) {
        transport.releaseFrame(NioStreamConnection.this, bytes);
      }
    };
  }

  boolean isClosed() {
    return closed.get();
  }

  @Override
  public void markEstablished() {
    if (inbound() && slot.compareAndSet(Slot.AWAITING_FIRST_MESSAGE, Slot.ESTABLISHED)) {
      transport.inboundEstablished(this);
    }
  }

  /**
   * Hands this connection's slot to the caller if its first message has not been read yet; the caller then closes it,
   * and the close gives nothing back.
   *
   * @return false if the connection is established or closed: it keeps (or already gave back) its slot
   */
  boolean giveUpSlot() {
    return inbound() && slot.compareAndSet(Slot.AWAITING_FIRST_MESSAGE, Slot.RELEASED);
  }

  /** Starts the hard deadline of an inbound connection (nothing for an outbound one). */
  void armHardDeadline() throws IOException {
    if (inbound()) {
      setDeadline(Duration.ofNanos(Math.max(0, hardDeadlineNanos - System.nanoTime())));
    }
  }

  @Override
  public void setDeadline(Duration fromNow) throws IOException {
    if (closed.get()) {
      throw new IOException(expired ? "stream deadline exceeded" : "stream closed");
    }
    long delay = Math.max(0, fromNow.toNanos());
    if (inbound()) {
      delay = Math.min(delay, Math.max(0, hardDeadlineNanos - System.nanoTime()));
    }
    synchronized (deadlineLock) {
      if (deadline != null) {
        deadline.cancel(false);
      }
      try {
        deadline = transport.deadlines().schedule(ThreadErrors.reported(this::expire), delay, TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        close();
        throw new IOException("transport closed", e);
      }
    }
  }

  private void expire() {
    if (closed.get()) {
      return;
    }
    expired = true;
    if (inbound()) {
      transport.inboundExpired(remote);
    }
    close();
  }

  private IOException failure(IOException e) {
    return expired ? new IOException("stream deadline exceeded with " + remote, e) : e;
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    synchronized (deadlineLock) {
      if (deadline != null) {
        deadline.cancel(false);
      }
    }
    try {
      channel.close();
    } catch (IOException ignored) {
      // closing a socket that is already broken has nothing left to report
    }
    transport.unregister(this);
    if (inbound() && slot.getAndSet(Slot.RELEASED) != Slot.RELEASED) {
      transport.inboundClosed();
    }
  }

  private final class CountingInput extends FilterInputStream {
    CountingInput(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      int n = read(one, 0, 1);
      return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      try {
        int n = super.read(b, off, len);
        if (n > 0) {
          transport.streamBytesReceived.addAndGet(n);
        }
        return n;
      } catch (IOException e) {
        throw failure(e);
      }
    }
  }

  private final class CountingOutput extends OutputStream {
    private final OutputStream out;

    CountingOutput(OutputStream out) {
      this.out = out;
    }

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      try {
        out.write(b, off, len);
        transport.streamBytesSent.addAndGet(len);
      } catch (IOException e) {
        throw failure(e);
      }
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void close() throws IOException {
      NioStreamConnection.this.close();
    }
  }
}
