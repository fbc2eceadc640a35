package dev.fencing.agent.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.Empty;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.Event;
import dev.fencing.proto.fencing.v1.EventType;
import dev.fencing.proto.fencing.v1.FencingGrpc;
import dev.fencing.proto.fencing.v1.Node;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.TreeMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The local API over a real Unix domain socket. */
class LocalApiServerTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  @TempDir Path dir;
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  private LocalApiServer startServer(Path socket, EventHub hub) throws IOException {
    LocalApiServer server = new LocalApiServer(socket, hub, () -> AgentStatus.newBuilder().setNode("node-a").build());
    server.start();
    toClose.add(server);
    return server;
  }

  private FencingGrpc.FencingBlockingStub blocking(Path socket) {
    return FencingGrpc.newBlockingStub(channel(socket));
  }

  private ManagedChannel channel(Path socket) {
    ManagedChannel channel = LocalApiChannel.open(socket);
    toClose.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    return channel;
  }

  @Test
  void getAllReturnsCurrentMembersWithAddressesAndPrevDisconnectTime() throws IOException {
    EventHub hub = new EventHub(16, InstantSource.fixed(T0));
    Path socket = dir.resolve("agent.sock");
    startServer(socket, hub);
    hub.publish(EventType.JOIN, "node-a", Map.of("InternalIP", "198.18.0.1"), T0, "gossip");
    hub.publish(EventType.JOIN, "node-b", Map.of("InternalIP", "198.18.0.2"), T0, "gossip");
    hub.publish(EventType.LEFT, "node-a", Map.of(), T0.plusSeconds(5), "gossip");
    hub.publish(EventType.JOIN, "node-a", Map.of("InternalIP", "198.18.0.1"), T0.plusSeconds(9), "gossip");

    List<Node> nodes = blocking(socket).getAll(Empty.getDefaultInstance()).getNodesList();

    assertThat(nodes).extracting(Node::getName).containsExactly("node-b", "node-a");
    Node a = nodes.get(1);
    assertThat(a.getAddressesMap()).containsEntry("InternalIP", "198.18.0.1");
    assertThat(a.hasPrevDisconnectTime()).isTrue();
    assertThat(a.getPrevDisconnectTime().getSeconds()).isEqualTo(T0.plusSeconds(5).getEpochSecond());
    assertThat(nodes.get(0).hasPrevDisconnectTime()).isFalse();
  }

  @Test
  void streamOpensWithSnapshotJoinsThenLiveEventsInPublishOrder() throws IOException {
    EventHub hub = new EventHub(64, InstantSource.fixed(T0));
    Path socket = dir.resolve("agent.sock");
    startServer(socket, hub);
    hub.publish(EventType.JOIN, "node-a", Map.of("InternalIP", "198.18.0.1"), T0, "gossip");
    hub.publish(EventType.JOIN, "node-b", Map.of("InternalIP", "198.18.0.2"), T0, "gossip");
    Iterator<Event> stream = blocking(socket).streamEvents(Empty.getDefaultInstance());

    List<String> seen = new ArrayList<>();
    seen.add(describe(stream.next()));
    seen.add(describe(stream.next()));
    hub.publish(EventType.LEFT, "node-a", Map.of(), T0.plusSeconds(1), "gossip");
    hub.publish(EventType.JOIN, "node-c", Map.of("InternalIP", "198.18.0.3"), T0.plusSeconds(2), "gossip");
    hub.publish(EventType.LEFT, "node-b", Map.of(), T0.plusSeconds(3), "isolated");
    for (int i = 0; i < 3; i++) {
      seen.add(describe(stream.next()));
    }

    assertThat(seen).containsExactly(
        "JOIN node-a snapshot {InternalIP=198.18.0.1}",
        "JOIN node-b snapshot {InternalIP=198.18.0.2}",
        "LEFT node-a gossip {InternalIP=198.18.0.1}",
        "JOIN node-c gossip {InternalIP=198.18.0.3}",
        "LEFT node-b isolated {InternalIP=198.18.0.2}");
  }

  private static String describe(Event e) {
    return e.getType() + " " + e.getNode().getName() + " " + e.getSourceName() + " "
        + new TreeMap<>(e.getNode().getAddressesMap());
  }

  @Test
  void everySubscriberEndsWithTheFinalMembershipWhenSubscribingDuringPublishing() throws Exception {
    long seed = 20261122L;
    EventHub hub = new EventHub(100_000, InstantSource.system());
    Path socket = dir.resolve("agent.sock");
    startServer(socket, hub);
    FencingGrpc.FencingStub async = FencingGrpc.newStub(channel(socket));
    int subscribers = 12;
    List<CompletableFuture<Map<String, String>>> views = new ArrayList<>();
    List<MembershipFollower> followers = new ArrayList<>();
    AtomicBoolean allSubscribed = new AtomicBoolean();

    // The publisher runs until every subscriber is registered, and a while after, so each subscription races it.
    CompletableFuture<Integer> publisher = CompletableFuture.supplyAsync(() -> {
      Random random = new Random(seed);
      int i = 0;
      int after = 0;
      while (after < 5_000) {
        if (i >= 60_000 && !allSubscribed.get()) {
          Thread.onSpinWait(); // stay within the subscribers' buffers if subscribing is slow
          continue;
        }
        String node = "node-" + random.nextInt(24);
        if (random.nextBoolean()) {
          hub.publish(EventType.JOIN, node, Map.of("InternalIP", "198.18.1." + i % 250), null, "gossip");
        } else {
          hub.publish(EventType.LEFT, node, Map.of(), null, "gossip");
        }
        i++;
        if (allSubscribed.get()) {
          after++;
        }
      }
      return i;
    });
    for (int s = 0; s < subscribers; s++) {
      CompletableFuture<Map<String, String>> view = new CompletableFuture<>();
      MembershipFollower follower = new MembershipFollower(view);
      views.add(view);
      followers.add(follower);
      async.streamEvents(Empty.getDefaultInstance(), follower);
      int registered = s + 1;
      await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(1))
          .until(() -> hub.subscriberCount() == registered);
    }
    allSubscribed.set(true);
    int published = publisher.get(30, TimeUnit.SECONDS);
    hub.publish(EventType.JOIN, MembershipFollower.SENTINEL, Map.of(), null, "test");

    Map<String, String> expected = hub.currentMembers().stream()
        .filter(n -> !n.getName().equals(MembershipFollower.SENTINEL))
        .collect(Collectors.toMap(Node::getName, n -> n.getAddressesMap().get("InternalIP")));
    for (int s = 0; s < subscribers; s++) {
      assertThat(views.get(s).get(30, TimeUnit.SECONDS))
          .as("view of subscriber %d (seed %d, %d events)", s, seed, published).isEqualTo(expected);
      assertThat(followers.get(s).snapshotJoins).as("subscriber %d snapshot", s).isPositive();
      assertThat(followers.get(s).liveEvents).as("subscriber %d live events", s).isGreaterThanOrEqualTo(5_000);
    }
  }

  /** Applies a stream to a membership map until the sentinel node joins. */
  private static final class MembershipFollower implements StreamObserver<Event> {
    static final String SENTINEL = "zz-sentinel";
    private final Map<String, String> view = new HashMap<>();
    private final CompletableFuture<Map<String, String>> result;
    volatile int snapshotJoins;
    volatile int liveEvents;

    MembershipFollower(CompletableFuture<Map<String, String>> result) {
      this.result = result;
    }

    @Override
    public void onNext(Event e) {
      String name = e.getNode().getName();
      if (EventHub.SNAPSHOT_SOURCE.equals(e.getSourceName())) {
        snapshotJoins++;
      } else {
        liveEvents++;
      }
      if (name.equals(SENTINEL)) {
        result.complete(Map.copyOf(view));
      } else if (e.getType() == EventType.JOIN) {
        view.put(name, e.getNode().getAddressesMap().get("InternalIP"));
      } else {
        view.remove(name);
      }
    }

    @Override
    public void onError(Throwable t) {
      result.completeExceptionally(t);
    }

    @Override
    public void onCompleted() {
      result.completeExceptionally(new AssertionError("stream completed before the sentinel"));
    }
  }

  @Test
  void consumerThatDoesNotReadIsDroppedWithResourceExhaustedWhileAFastOneGetsEverything() throws Exception {
    int buffer = 64;
    EventHub hub = new EventHub(buffer, InstantSource.system());
    Path socket = dir.resolve("agent.sock");
    startServer(socket, hub);
    FencingGrpc.FencingStub async = FencingGrpc.newStub(channel(socket));

    RecordingObserver slow = new RecordingObserver(false);
    async.streamEvents(Empty.getDefaultInstance(), slow);
    RecordingObserver fast = new RecordingObserver(true);
    async.streamEvents(Empty.getDefaultInstance(), fast);
    await().atMost(Duration.ofSeconds(5)).until(() -> hub.subscriberCount() == 2);

    // Publish in batches smaller than the buffer and let the fast consumer catch up after each batch; the slow one
    // never reads, so its transport window and then its buffer fill until the hub drops it.
    int batch = buffer / 2;
    int published = 0;
    while (hub.subscriberCount() == 2) {
      assertThat(published).as("slow consumer still subscribed after %d events", published).isLessThan(2_000_000);
      for (int i = 0; i < batch; i++) {
        hub.publish(i % 2 == 0 ? EventType.JOIN : EventType.LEFT, "node-" + (published % 7),
            Map.of("seq", Integer.toString(published)), null, "gossip");
        published++;
      }
      assertThat(fast.arrivals.tryAcquire(batch, 10, TimeUnit.SECONDS)).as("fast consumer keeps up").isTrue();
    }

    assertThat(fast.events).hasSize(published);
    assertThat(fast.events.get(published - 1).getNode().getAddressesMap()).containsEntry("seq",
        Integer.toString(published - 1));
    assertThat(fast.end).isNotDone();
    slow.startReading();
    Status slowStatus = slow.end.get(10, TimeUnit.SECONDS);
    assertThat(slowStatus.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(slowStatus.getDescription()).contains("resync");
    assertThat(slow.events.size()).isLessThan(published);
    assertThat(hub.subscriberCount()).isEqualTo(1);
  }

  @Test
  void staleSocketFileIsReplaced() throws IOException {
    Path socket = dir.resolve("agent.sock");
    try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      dead.bind(UnixDomainSocketAddress.of(socket));
    }
    assertThat(socket).exists();
    EventHub hub = new EventHub(16, InstantSource.fixed(T0));
    hub.publish(EventType.JOIN, "node-a", Map.of(), T0, "gossip");

    startServer(socket, hub);

    assertThat(blocking(socket).getAll(Empty.getDefaultInstance()).getNodesCount()).isEqualTo(1);
  }

  @Test
  void socketOfALiveAgentIsNotStolen() throws IOException {
    Path socket = dir.resolve("agent.sock");
    startServer(socket, new EventHub(16, InstantSource.fixed(T0)));
    LocalApiServer second = new LocalApiServer(socket, new EventHub(16, InstantSource.fixed(T0)),
        AgentStatus::getDefaultInstance);

    assertThatThrownBy(second::start).isInstanceOf(IOException.class)
        .hasMessageContaining("another process is serving " + socket)
        .hasMessageContaining("--socket");
    assertThat(blocking(socket).getStatus(Empty.getDefaultInstance()).getNode()).isEqualTo("node-a");
  }

  @Test
  void regularFileAtTheSocketPathIsLeftAlone() throws IOException {
    Path socket = dir.resolve("agent.sock");
    Files.writeString(socket, "precious");
    LocalApiServer server = new LocalApiServer(socket, new EventHub(16, InstantSource.fixed(T0)),
        AgentStatus::getDefaultInstance);

    assertThatThrownBy(server::start).isInstanceOf(IOException.class).hasMessageContaining("is not a socket");
    assertThat(Files.readString(socket)).isEqualTo("precious");
  }

  @Test
  void tooLongSocketPathIsRejectedWithAClearMessage() {
    Path socket = dir.resolve("x".repeat(120) + ".sock");
    LocalApiServer server = new LocalApiServer(socket, new EventHub(16, InstantSource.fixed(T0)),
        AgentStatus::getDefaultInstance);

    assertThatThrownBy(server::start).isInstanceOf(IOException.class).hasMessageContaining("choose a shorter path");
  }

  @Test
  void socketIsMode0660InACreatedParentAndRemovedOnClose() throws IOException {
    Path socket = dir.resolve("run/fencing/agent.sock");
    LocalApiServer server = startServer(socket, new EventHub(16, InstantSource.fixed(T0)));

    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket))).isEqualTo("rw-rw----");
    server.close();
    assertThat(socket).doesNotExist();
  }

  @Test
  void getStatusServesTheSupplierAndFailedPreconditionWhenThereIsNoStatusYet() throws IOException {
    Path socket = dir.resolve("agent.sock");
    AtomicReference<AgentStatus> current = new AtomicReference<>();
    LocalApiServer server = new LocalApiServer(socket, new EventHub(16, InstantSource.fixed(T0)), current::get);
    server.start();
    toClose.add(server);
    FencingGrpc.FencingBlockingStub stub = blocking(socket);

    assertThatThrownBy(() -> stub.getStatus(Empty.getDefaultInstance()))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION));
    current.set(AgentStatus.newBuilder().setNode("node-a").setGroup("workers").setQuorumHeld(true).build());
    AgentStatus status = stub.getStatus(Empty.getDefaultInstance());
    assertThat(status.getGroup()).isEqualTo("workers");
    assertThat(status.getQuorumHeld()).isTrue();
  }

  @Test
  void closingTheServerEndsOpenStreamsWithUnavailable() throws Exception {
    Path socket = dir.resolve("agent.sock");
    EventHub hub = new EventHub(16, InstantSource.fixed(T0));
    LocalApiServer server = startServer(socket, hub);
    RecordingObserver client = new RecordingObserver(true);
    FencingGrpc.newStub(channel(socket)).streamEvents(Empty.getDefaultInstance(), client);
    await().atMost(Duration.ofSeconds(5)).until(() -> hub.subscriberCount() == 1);

    server.close();

    assertThat(client.end.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(hub.subscriberCount()).isZero();
  }
}
