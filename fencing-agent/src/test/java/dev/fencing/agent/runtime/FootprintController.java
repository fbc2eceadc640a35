package dev.fencing.agent.runtime;

import com.google.protobuf.ByteString;
import dev.fencing.agent.config.StandaloneConfigLoader;
import dev.fencing.agent.control.TestPki;
import dev.fencing.policy.PolicyProtos;
import dev.fencing.proto.nodemanager.v1.AgentControlGrpc;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.GossipKeyring;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import dev.fencing.proto.nodemanager.v1.Member;
import io.grpc.Server;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The controller side of {@link IdleFootprintBenchmark} in its production mode: AgentControl over TLS on loopback,
 * answering each agent's hello with the group's full config (members, policy, gossip keyring) for that node, and
 * counting reports. Agents run as the DaemonSet starts them ({@code run --controller … --controller-ca …
 * --token-file …}), so the classes, threads and buffers of the controller stream are in the figure.
 */
final class FootprintController implements AutoCloseable {

  /**
   * The group as a standalone config file: node-i gossips on 127.0.0.1:gossipPorts[i], encrypted with {@code key}
   * (an agent without a keyring would not arm). The controller sends the same members, policy and key.
   */
  static String groupYaml(List<Integer> gossipPorts, byte[] key) {
    StringBuilder yaml = new StringBuilder("group: footprint\ngossip: {keys: [\""
        + Base64.getEncoder().encodeToString(key) + "\"]}\nexpected:\n");
    for (int i = 0; i < gossipPorts.size(); i++) {
      yaml.append("  - {name: ").append(nodeName(i)).append(", address: 127.0.0.1:").append(gossipPorts.get(i))
          .append("}\n");
    }
    return yaml.append("fencing:\n  watchdog: {timeout: 60s}\n  quorum: {tieBreakers: [LowestName]}\n").toString();
  }

  private final GroupConfig group;
  private final Set<String> helloFrom = ConcurrentHashMap.newKeySet();
  private final AtomicInteger reports = new AtomicInteger();
  private final AtomicInteger hellos = new AtomicInteger();
  private Server server;

  /** @param gossipPorts node-i gossips on 127.0.0.1:gossipPorts[i]; @param key the group's AES key (16/24/32 bytes) */
  FootprintController(List<Integer> gossipPorts, byte[] key) throws Exception {
    GroupConfig.Builder config = GroupConfig.newBuilder().setGroup("footprint")
        .setKeyring(GossipKeyring.newBuilder().setPrimary(ByteString.copyFrom(key)).setRevision(1));
    for (int i = 0; i < gossipPorts.size(); i++) {
      config.addMembers(Member.newBuilder().setName(nodeName(i)).setGossipAddress("127.0.0.1:" + gossipPorts.get(i))
          .putAddresses("InternalIP", "127.0.0.1"));
    }
    config.setPolicy(PolicyProtos.toProto(StandaloneConfigLoader.parse("footprint.yaml", groupYaml(gossipPorts, key))
        .policy()));
    this.group = config.build();
  }

  static String nodeName(int i) {
    return "node-" + i;
  }

  /** The config node {@code node} is sent. */
  GroupConfig configFor(String node) {
    return group.toBuilder().setNodeName(node).build();
  }

  /**
   * Starts serving on 127.0.0.1 with a certificate for {@code localhost} from a fresh CA; writes {@code ca.crt} and
   * a token file into {@code dir}.
   */
  FootprintController start(Path dir) throws Exception {
    TestPki pki = new TestPki("footprint-ca", 1);
    pki.writeCa(dir.resolve("ca.crt"));
    Path[] serving = pki.issue(dir, "controller", "localhost");
    Files.writeString(dir.resolve("token"), "footprint-benchmark-token");
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0),
            TlsServerCredentials.create(serving[0].toFile(), serving[1].toFile()))
        .addService(new Service())
        // The keepalive policy of the real AgentControlServer. With gRPC's defaults (pings allowed every 5 min) the
        // agents' 20 s pings earn a GOAWAY (too_many_pings) and a reconnect with a full config after a minute, then
        // after two, four…: CPU and classes a node served by the real controller never spends.
        .keepAliveTime(30, TimeUnit.SECONDS)
        .keepAliveTimeout(10, TimeUnit.SECONDS)
        .permitKeepAliveTime(10, TimeUnit.SECONDS)
        .permitKeepAliveWithoutCalls(true)
        .build().start();
    return this;
  }

  int port() {
    return server.getPort();
  }

  /** Agents that said hello (and were sent their config). */
  Set<String> helloFrom() {
    return Set.copyOf(helloFrom);
  }

  /** Hellos received, one per stream: more than the number of agents means some reconnected during the run. */
  int hellos() {
    return hellos.get();
  }

  int reports() {
    return reports.get();
  }

  @Override
  public void close() throws InterruptedException {
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private final class Service extends AgentControlGrpc.AgentControlImplBase {
    @Override
    public StreamObserver<AgentMessage> connect(StreamObserver<ControllerMessage> out) {
      return new StreamObserver<>() {
        @Override
        public void onNext(AgentMessage m) {
          if (m.hasHello()) {
            String node = m.getHello().getNodeName();
            helloFrom.add(node);
            hellos.incrementAndGet();
            out.onNext(ControllerMessage.newBuilder().setEpoch("footprint").setRevision(1)
                .setFull(configFor(node)).build());
          } else if (m.hasReport()) {
            reports.incrementAndGet();
          }
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          out.onCompleted();
        }
      };
    }
  }
}
