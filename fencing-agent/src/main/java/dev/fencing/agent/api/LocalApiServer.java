package dev.fencing.agent.api;

import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.FencingGrpc;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves {@code fencing.v1.Fencing} (GetAll, StreamEvents, GetStatus) on a Unix domain socket with grpc-java Netty
 * (epoll where available, NIO otherwise), next to the standard {@code grpc.health.v1.Health} service (status of
 * {@code fencing.v1.Fencing} and of the server as a whole, the empty name: SERVING from {@link #start()} until
 * {@link #close()}, then NOT_SERVING for open Watch streams) and server reflection ({@code grpc.reflection.v1}), so
 * probes and tools such as grpcurl work without the {@code .proto}.
 *
 * <p>Socket file handling: the parent directory is created; an existing file at the path is replaced only if it is a
 * socket that nobody answers on (left over by a crashed agent). A regular file, a directory or a socket another live
 * process answers on makes {@link #start()} fail with a message saying so, rather than stealing it. After start the
 * socket is mode 0660; {@link #close()} ends open streams with UNAVAILABLE, stops the server and removes the socket
 * file it created.
 */
public final class LocalApiServer implements AutoCloseable {

  /** Longest socket path the kernel accepts (sun_path is 108 bytes including the terminating NUL). */
  public static final int MAX_SOCKET_PATH_BYTES = 107;

  private static final Logger LOG = LoggerFactory.getLogger(LocalApiServer.class);
  private static final int S_IFMT = 0170000;
  private static final int S_IFSOCK = 0140000;

  private final Path socket;
  private final EventHub hub;
  private final Supplier<AgentStatus> status;
  private Server server;
  private EventLoopGroup eventLoops;
  private ExecutorService executor;
  private FencingService service;
  private HealthStatusManager health;
  private Object socketFileKey;

  /**
   * @param socket socket file path, e.g. /var/run/fencing-agent.sock (at most {@value #MAX_SOCKET_PATH_BYTES} bytes)
   * @param hub membership events and the member view served by GetAll and StreamEvents
   * @param status supplies GetStatus answers; null while the agent has no status yet (FAILED_PRECONDITION), an
   *     exception becomes INTERNAL
   */
  public LocalApiServer(Path socket, EventHub hub, Supplier<AgentStatus> status) {
    this.socket = Objects.requireNonNull(socket, "socket").toAbsolutePath();
    this.hub = Objects.requireNonNull(hub, "hub");
    this.status = Objects.requireNonNull(status, "status");
  }

  /**
   * Binds the socket and starts serving.
   *
   * @throws IOException if the path is too long, occupied by something that is not a stale socket, or cannot be
   *     bound; the message says what to do
   * @throws IllegalStateException if already started
   */
  public synchronized void start() throws IOException {
    if (server != null) {
      throw new IllegalStateException("local API server already started on " + socket);
    }
    int length = socket.toString().getBytes(StandardCharsets.UTF_8).length;
    if (length > MAX_SOCKET_PATH_BYTES) {
      throw new IOException("socket path " + socket + " is " + length + " bytes, longer than the "
          + MAX_SOCKET_PATH_BYTES + " a Unix socket allows: choose a shorter path");
    }
    Path parent = socket.getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    removeStaleSocket(socket);

    boolean epoll = Epoll.isAvailable();
    eventLoops = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("fencing-api-io", true),
        epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    executor = new ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
        new DefaultThreadFactory("fencing-api", true));
    service = new FencingService(hub, status, executor);
    health = new HealthStatusManager();
    SocketAddress address = epoll ? new DomainSocketAddress(socket.toString()) : UnixDomainSocketAddress.of(socket);
    Class<? extends ServerChannel> channelType =
        epoll ? EpollServerDomainSocketChannel.class : NioServerDomainSocketChannel.class;
    try {
      server = NettyServerBuilder.forAddress(address)
          .channelType(channelType)
          .bossEventLoopGroup(eventLoops)
          .workerEventLoopGroup(eventLoops)
          .executor(executor)
          .addService(service)
          .addService(health.getHealthService())
          .addService(ProtoReflectionServiceV1.newInstance())
          .build()
          .start();
      Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw----"));
      socketFileKey = Files.readAttributes(socket, "unix:ino", LinkOption.NOFOLLOW_LINKS).get("ino");
      health.setStatus(FencingGrpc.SERVICE_NAME, ServingStatus.SERVING);
      health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.SERVING);
    } catch (IOException | RuntimeException e) {
      stop();
      throw new IOException("cannot serve the local API on " + socket + ": " + e.getMessage(), e);
    }
    LOG.info("event=local_api_started socket={} transport={}", socket, epoll ? "epoll" : "nio");
  }

  /** The socket path served. */
  public Path socket() {
    return socket;
  }

  /**
   * Reports NOT_SERVING to health watchers, ends open event streams with UNAVAILABLE, stops the server and removes
   * the socket file. Idempotent.
   */
  @Override
  public synchronized void close() {
    if (server == null) {
      return;
    }
    health.enterTerminalState();
    service.endAllStreams();
    stop();
    LOG.info("event=local_api_stopped socket={}", socket);
  }

  private void stop() {
    if (server != null) {
      server.shutdown();
      try {
        if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
          server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        server.shutdownNow();
        Thread.currentThread().interrupt();
      }
      server = null;
    }
    if (eventLoops != null) {
      eventLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      eventLoops = null;
    }
    if (executor != null) {
      executor.shutdownNow();
      executor = null;
    }
    removeOwnSocketFile();
  }

  // Removes the socket file only if it is still the one this server bound (another agent may have replaced it).
  private void removeOwnSocketFile() {
    if (socketFileKey == null) {
      return;
    }
    try {
      Object current = Files.readAttributes(socket, "unix:ino", LinkOption.NOFOLLOW_LINKS).get("ino");
      if (socketFileKey.equals(current)) {
        Files.deleteIfExists(socket);
      }
    } catch (IOException e) {
      LOG.debug("event=socket_cleanup socket={} result={}", socket, e.getMessage());
    }
    socketFileKey = null;
  }

  /**
   * Deletes a socket file left behind by a dead agent. Refuses (with an explanation) to touch anything else or a
   * socket on which a live process accepts connections.
   */
  static void removeStaleSocket(Path socket) throws IOException {
    if (!Files.exists(socket, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    int mode;
    try {
      mode = (Integer) Files.readAttributes(socket, "unix:mode", LinkOption.NOFOLLOW_LINKS).get("mode");
    } catch (UncheckedIOException | UnsupportedOperationException e) {
      throw new IOException("cannot inspect existing " + socket + ": " + e.getMessage(), e);
    }
    if ((mode & S_IFMT) != S_IFSOCK) {
      throw new IOException(socket + " exists and is not a socket: remove it or choose another --socket path");
    }
    if (answers(socket)) {
      throw new IOException("another process is serving " + socket
          + " (is a fencing agent already running?): stop it or choose another --socket path");
    }
    Files.deleteIfExists(socket);
    LOG.info("event=stale_socket_removed socket={}", socket);
  }

  /** True if a process accepts connections on the socket; false if the connection is refused (a stale file). */
  static boolean answers(Path socket) {
    try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      probe.connect(UnixDomainSocketAddress.of(socket));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
