package dev.fencing.proto;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Empty;
import com.google.protobuf.Timestamp;
import dev.fencing.proto.fencing.v1.AllNodes;
import dev.fencing.proto.fencing.v1.Event;
import dev.fencing.proto.fencing.v1.EventType;
import dev.fencing.proto.fencing.v1.FencingGrpc;
import dev.fencing.proto.fencing.v1.Node;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Proves on this machine that the transport the agent serves fencing.v1 on (gRPC over a Unix socket, epoll) works. */
class UnixSocketTransportTest {

  @TempDir Path dir;

  @Test
  void getAllAndStreamEventsRoundTripOverEpollUnixSocket() throws Exception {
    assertThat(Epoll.isAvailable()).as("epoll: %s", Epoll.unavailabilityCause()).isTrue();
    Path socket = dir.resolve("fencing.sock");
    Node nodeA = Node.newBuilder().setName("node-a").putAddresses("InternalIP", "198.18.0.1").build();
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    Server server =
        NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollServerDomainSocketChannel.class)
            .bossEventLoopGroup(group)
            .workerEventLoopGroup(group)
            .addService(new FixedFencing(nodeA))
            .build()
            .start();
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(group)
            .usePlaintext()
            .build();
    try {
      assertThat(Files.exists(socket)).isTrue();
      FencingGrpc.FencingBlockingStub stub =
          FencingGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);

      AllNodes all = stub.getAll(Empty.getDefaultInstance());
      assertThat(all.getNodesList()).containsExactly(nodeA);

      List<Event> events = new ArrayList<>();
      Iterator<Event> it = stub.streamEvents(Empty.getDefaultInstance());
      it.forEachRemaining(events::add);
      assertThat(events).extracting(Event::getType).containsExactly(EventType.JOIN, EventType.LEFT);
      assertThat(events.get(1).getNode().getName()).isEqualTo("node-a");
      assertThat(events.get(1).getSourceName()).isEqualTo("gossip");
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }

  private static final class FixedFencing extends FencingGrpc.FencingImplBase {
    private final Node node;

    FixedFencing(Node node) {
      this.node = node;
    }

    @Override
    public void getAll(Empty request, StreamObserver<AllNodes> response) {
      response.onNext(AllNodes.newBuilder().addNodes(node).build());
      response.onCompleted();
    }

    @Override
    public void streamEvents(Empty request, StreamObserver<Event> response) {
      Timestamp t = Timestamp.newBuilder().setSeconds(1).build();
      response.onNext(Event.newBuilder().setNode(node).setType(EventType.JOIN).setTime(t).setSourceName("snapshot").build());
      response.onNext(Event.newBuilder().setNode(node).setType(EventType.LEFT).setTime(t).setSourceName("gossip").build());
      response.onCompleted();
    }
  }
}
