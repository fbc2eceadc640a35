package dev.fencing.agent.runtime;

import dev.fencing.agent.api.EventHub;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.StandaloneConfig;
import dev.fencing.agent.config.StandaloneConfigLoader;
import dev.fencing.agent.membership.MemberlistGossip;
import dev.fencing.agent.quorum.MonotonicClock;
import dev.fencing.agent.watchdog.RecordingWatchdogDevice;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Several real agents in this JVM: real memberlist on loopback UDP/TCP, standalone configs, recording watchdog
 * devices, and a {@link NetworkCut} in every transport to partition them.
 */
final class AgentCluster implements AutoCloseable {

  /** Fast timings for loopback: T_stop = 600ms × 1.5 + 50ms = 950ms. */
  static final String FAST_TIMINGS = "{probeInterval: 200ms, probeTimeout: 80ms, suspicionMult: 3, "
      + "gossipInterval: 100ms, pushPullInterval: 2s, heartbeatInterval: 100ms, quorumWindow: 600ms, "
      + "localHealthCap: 1.5, evaluationTick: 50ms, feedInterval: 200ms, armingDelay: 1s, fenceMargin: 1s}";

  record Agent(String name, int port, FencingAgent agent, RecordingWatchdogDevice device, EventHub hub) {
    List<String> members() {
      return hub.currentMembers().stream().map(dev.fencing.proto.fencing.v1.Node::getName).sorted().toList();
    }
  }

  final NetworkCut cut = new NetworkCut();
  private final java.util.Map<String, byte[]> gossipKeyByNode = new java.util.HashMap<>();
  final List<Agent> agents = new ArrayList<>();
  final StandaloneConfig config;

  private AgentCluster(StandaloneConfig config) {
    this.config = config;
  }

  /** Starts {@code n} agents named node-a, node-b, … with the given quorumLossAction and tie-breakers. */
  static AgentCluster start(int n, String quorumLossAction, String tieBreakers) throws Exception {
    return start(n, quorumLossAction, tieBreakers, List.of());
  }

  /** As {@link #start(int, String, String)}, with the named agents cut off from the others before any starts. */
  static AgentCluster start(int n, String quorumLossAction, String tieBreakers, List<String> isolatedFromStart)
      throws Exception {
    return start(n, quorumLossAction, tieBreakers, isolatedFromStart, java.util.Map.of(), FAST_TIMINGS);
  }

  /** {@code n} agents with Fence and LowestName and the given {@code timings:} block ("{}" = the Auto profile). */
  static AgentCluster startWithTimings(int n, String timings) throws Exception {
    return start(n, "Fence", "LowestName", List.of(), java.util.Map.of(), timings);
  }

  /** As {@link #start(int, String, String)}, each named agent encrypting gossip with its own AES key. */
  static AgentCluster startEncrypted(int n, java.util.Map<String, byte[]> gossipKeyByNode) throws Exception {
    return start(n, "Fence", "LowestName", List.of(), gossipKeyByNode, FAST_TIMINGS);
  }

  private static AgentCluster start(int n, String quorumLossAction, String tieBreakers,
      List<String> isolatedFromStart, java.util.Map<String, byte[]> gossipKeyByNode, String timings)
      throws Exception {
    List<Integer> ports = new ArrayList<>();
    StringBuilder yaml = new StringBuilder("group: test\nexpected:\n");
    for (int i = 0; i < n; i++) {
      int port = LoopbackPorts.free();
      ports.add(port);
      yaml.append("  - {name: node-").append((char) ('a' + i)).append(", address: 127.0.0.1:").append(port)
          .append(", addresses: {InternalIP: 10.0.0.").append(i + 1).append("}}\n");
    }
    yaml.append("fencing:\n  mode: Watchdog\n  watchdog: {timeout: 5s}\n  quorumLossAction: ").append(quorumLossAction)
        .append("\n  quorum: {tieBreakers: [").append(tieBreakers).append("]}\n  timings: ").append(timings)
        .append('\n');
    StandaloneConfig config = StandaloneConfigLoader.parse("cluster.yaml", yaml.toString());
    AgentCluster cluster = new AgentCluster(config);
    cluster.gossipKeyByNode.putAll(gossipKeyByNode);
    for (String name : isolatedFromStart) {
      int isolated = ports.get(name.charAt(name.length() - 1) - 'a');
      for (int port : ports) {
        if (port != isolated) {
          cluster.cut.cutBothWays(isolated, port);
        }
      }
    }
    try {
      for (int i = 0; i < n; i++) {
        cluster.startAgent("node-" + (char) ('a' + i), ports.get(i));
      }
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
    return cluster;
  }

  private void startAgent(String name, int port) throws Exception {
    RecordingWatchdogDevice device = new RecordingWatchdogDevice();
    EventHub hub = new EventHub(1024, InstantSource.system());
    GossipFactory gossip = (cfg, meta) -> MemberlistGossip.create(cfg, meta,
        new InetSocketAddress(InetAddress.getLoopbackAddress(), port), Optional.of(cut::wrap));
    FencingAgent agent = new FencingAgent(name, new FencingAgent.Dependencies(MonotonicClock.system(),
        InstantSource.system(), device, gossip, hub, new SimpleMeterRegistry(), "test", Optional.empty(),
        Optional.empty(), Duration.ofSeconds(1), Duration.ofSeconds(1), true));
    agent.start();
    AgentConfig own = AgentConfig.fromStandalone(config, name, "cluster.yaml");
    byte[] key = gossipKeyByNode.get(name);
    if (key != null) {
      own = new AgentConfig(own.group(), own.self(), own.members(), own.policy(), List.of(key), own.maintenance(),
          own.beingRemoved(), own.source(), own.epoch(), own.revision());
    }
    agent.applyConfig(own);
    agents.add(new Agent(name, port, agent, device, hub));
  }

  Agent agent(String name) {
    return agents.stream().filter(a -> a.name().equals(name)).findFirst().orElseThrow();
  }

  /** Cuts {@code name} off from every other agent, both ways. */
  void isolate(String name) {
    Agent isolated = agent(name);
    for (Agent other : agents) {
      if (other != isolated) {
        cut.cutBothWays(isolated.port(), other.port());
      }
    }
  }

  /** Cuts every link between the two groups, both ways. */
  void split(List<String> sideA, List<String> sideB) {
    for (String a : sideA) {
      for (String b : sideB) {
        cut.cutBothWays(agent(a).port(), agent(b).port());
      }
    }
  }

  Duration tStop() {
    return config.policy().timings().tStop();
  }

  @Override
  public void close() {
    for (Agent a : agents) {
      a.agent().close();
    }
  }
}
