package dev.fencing.agent.runtime;

import dev.fencing.agent.api.EventHub;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.StandaloneConfig;
import dev.fencing.agent.config.StandaloneConfigLoader;
import dev.fencing.agent.membership.MultiNetworkGossip;
import dev.fencing.agent.quorum.MonotonicClock;
import dev.fencing.agent.watchdog.RecordingWatchdogDevice;
import dev.fencing.proto.fencing.v1.Event;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Several real agents in this JVM: real memberlist on loopback UDP/TCP, standalone configs, recording watchdog
 * devices, and a {@link NetworkCut} in every transport to partition them. Every agent's event stream is recorded
 * from its start, its gossip members are counted as they are created, and the group can grow and shrink by config.
 */
final class AgentCluster implements AutoCloseable {

  /** Fast timings for loopback: T_stop = 600ms × 1.5 + 50ms = 950ms. */
  static final String FAST_TIMINGS = "{probeInterval: 200ms, probeTimeout: 80ms, suspicionMult: 3, "
      + "gossipInterval: 100ms, pushPullInterval: 2s, heartbeatInterval: 100ms, quorumWindow: 600ms, "
      + "localHealthCap: 1.5, evaluationTick: 50ms, feedInterval: 200ms, armingDelay: 1s, fenceMargin: 1s}";

  /**
   * One running agent.
   *
   * @param events every event its local API published, from its start (what a consumer subscribed then sees)
   * @param gossipStarts how many gossip members it created (1 = never restarted)
   */
  record Agent(String name, int port, FencingAgent agent, RecordingWatchdogDevice device, EventHub hub,
      SimpleMeterRegistry registry, List<Event> events, AtomicInteger gossipStarts) {
    List<String> members() {
      return hub.currentMembers().stream().map(dev.fencing.proto.fencing.v1.Node::getName).sorted().toList();
    }

    double counter(String name) {
      var c = registry.find(name).counter();
      return c == null ? 0 : c.count();
    }

    /** Its row of the heard matrix as exported: fencing.peer.confirmed by peer. */
    java.util.Map<String, Double> heardRow() {
      java.util.Map<String, Double> row = new java.util.TreeMap<>();
      registry.find("fencing.peer.confirmed").gauges().forEach(g -> row.put(g.getId().getTag("peer"), g.value()));
      return row;
    }
  }

  /**
   * Per-agent seams for tests that stall, block or break one agent: its clock, a wrapper around its gossip, a
   * wrapper around its device, and where an Error in its loops goes.
   */
  record Hooks(java.util.function.Function<String, MonotonicClock> clock,
      java.util.function.BiFunction<String, dev.fencing.agent.membership.GossipMembership,
          dev.fencing.agent.membership.GossipMembership> gossip,
      java.util.function.BiFunction<String, RecordingWatchdogDevice, dev.fencing.agent.watchdog.WatchdogDevice> device,
      FatalErrors.Handler fatalErrors) {
    /** Real clock, gossip and device; an Error is only rethrown on its thread. */
    static final Hooks NONE = new Hooks(name -> MonotonicClock.system(), (name, g) -> g, (name, d) -> d,
        (thread, error) -> { });
  }

  final NetworkCut cut = new NetworkCut();
  private Hooks hooks = Hooks.NONE;
  private SharedDisk.Opener diskOpener;
  private final Map<String, byte[]> gossipKeyByNode = new java.util.HashMap<>();
  private final Map<String, Integer> ports = new LinkedHashMap<>();
  private final String quorumLossAction;
  private final String tieBreakers;
  private final String timings;
  private final boolean allowPlaintextGossip;
  // The key of every node not in gossipKeyByNode (the whole group's keyring), if any.
  private Optional<byte[]> groupKey = Optional.empty();
  final List<Agent> agents = new CopyOnWriteArrayList<>();
  final StandaloneConfig config;

  private AgentCluster(StandaloneConfig config, String quorumLossAction, String tieBreakers, String timings,
      boolean allowPlaintextGossip) {
    this.config = config;
    this.quorumLossAction = quorumLossAction;
    this.tieBreakers = tieBreakers;
    this.timings = timings;
    this.allowPlaintextGossip = allowPlaintextGossip;
  }

  /** Starts {@code n} agents named node-a, node-b, … with the given quorumLossAction and tie-breakers. */
  static AgentCluster start(int n, String quorumLossAction, String tieBreakers) throws Exception {
    return start(n, quorumLossAction, tieBreakers, List.of());
  }

  /** As {@link #start(int, String, String)}, with the named agents cut off from the others before any starts. */
  static AgentCluster start(int n, String quorumLossAction, String tieBreakers, List<String> isolatedFromStart)
      throws Exception {
    return start(n, quorumLossAction, tieBreakers, isolatedFromStart, Map.of(), FAST_TIMINGS, true);
  }

  /** {@code n} agents with Fence and LowestName and the given {@code timings:} block ("{}" = the Auto profile). */
  static AgentCluster startWithTimings(int n, String timings) throws Exception {
    return start(n, "Fence", "LowestName", List.of(), Map.of(), timings, true);
  }

  /** {@code n} agents with Fence and LowestName, the given timings and per-agent hooks. */
  static AgentCluster startWithHooks(int n, String timings, Hooks hooks) throws Exception {
    return start(n, "Fence", "LowestName", List.of(), Map.of(), timings, true, Optional.empty(), hooks);
  }

  /** As {@link #start(int, String, String)}, each named agent encrypting gossip with its own AES key. */
  static AgentCluster startEncrypted(int n, Map<String, byte[]> gossipKeyByNode) throws Exception {
    return start(n, "Fence", "LowestName", List.of(), gossipKeyByNode, FAST_TIMINGS, true);
  }

  /**
   * {@code n} agents under Fence / LowestName with the given timings, every one with {@code key} as its gossip
   * keyring and plaintext gossip not allowed (as in production).
   */
  static AgentCluster startKeyed(int n, String timings, byte[] key) throws Exception {
    return start(n, "Fence", "LowestName", List.of(), Map.of(), timings, false, Optional.of(key));
  }

  /** The first of two loopback networks (the agents' gossip addresses); ports tell the agents apart. */
  static final String NETWORK_1 = "127.0.1.0/24";
  /** The second loopback network: every agent has its own port on 127.0.2.1 there. */
  static final String NETWORK_2 = "127.0.2.0/24";

  // Per agent, its port on NETWORK_2 (clusters on two networks only).
  private final Map<String, Integer> secondPorts = new LinkedHashMap<>();

  /**
   * {@code n} agents under Fence / LowestName with fast timings on two networks: 127.0.1.1:port (NETWORK_1, also the
   * gossip address) and 127.0.2.1:port2 (NETWORK_2), with the given reachability rule.
   */
  static AgentCluster startOnTwoNetworks(int n, String reachability) throws Exception {
    Map<String, Integer> ports = new LinkedHashMap<>();
    Map<String, Integer> second = new LinkedHashMap<>();
    List<Integer> free = LoopbackPorts.distinct(2 * n);
    for (int i = 0; i < n; i++) {
      ports.put(name(i), free.get(i));
      second.put(name(i), free.get(n + i));
    }
    StringBuilder yaml = new StringBuilder("group: test\nexpected:\n");
    for (int i = 0; i < n; i++) {
      yaml.append("  - {name: ").append(name(i)).append(", address: '127.0.1.1:").append(ports.get(name(i)))
          .append("', gossipAddresses: {'").append(NETWORK_2).append("': '127.0.2.1:").append(second.get(name(i)))
          .append("'}, addresses: {InternalIP: 10.0.0.").append(i + 1).append("}}\n");
    }
    yaml.append("fencing:\n  mode: Watchdog\n  watchdog: {timeout: 5s}\n  quorumLossAction: Fence\n")
        .append("  quorum: {tieBreakers: [LowestName]}\n  timings: ").append(FAST_TIMINGS).append('\n')
        .append("  networks: ['").append(NETWORK_1).append("', '").append(NETWORK_2).append("']\n")
        .append("  reachability: ").append(reachability).append('\n');
    StandaloneConfig config = StandaloneConfigLoader.parse("cluster.yaml", yaml.toString());
    AgentCluster cluster = new AgentCluster(config, "Fence", "LowestName", FAST_TIMINGS, true);
    cluster.ports.putAll(ports);
    cluster.secondPorts.putAll(second);
    return cluster.startEvery(config);
  }

  /** Starts an agent for every allocated port with {@code config}; closes what started when one fails. */
  private AgentCluster startEvery(StandaloneConfig config) throws Exception {
    try {
      for (String name : ports.keySet()) {
        startAgent(name, configFor(name, config));
      }
    } catch (Exception e) {
      close();
      throw e;
    }
    return this;
  }

  /** Cuts {@code name} off from every other agent on NETWORK_2 only, both ways. */
  void isolateOnSecondNetwork(String name) {
    isolateAmong(name, secondPorts);
  }

  /** Cuts {@code name} off from every other agent on NETWORK_1 (the gossip addresses) only, both ways. */
  void isolateOnFirstNetwork(String name) {
    isolateAmong(name, ports);
  }

  private void isolateAmong(String name, Map<String, Integer> portsOnNetwork) {
    int isolated = portsOnNetwork.get(name);
    portsOnNetwork.forEach((other, port) -> {
      if (!other.equals(name)) {
        cut.cutBothWays(isolated, port);
      }
    });
  }

  static String name(int i) {
    return "node-" + (char) ('a' + i);
  }

  private static AgentCluster start(int n, String quorumLossAction, String tieBreakers,
      List<String> isolatedFromStart, Map<String, byte[]> gossipKeyByNode, String timings,
      boolean allowPlaintextGossip) throws Exception {
    return start(n, quorumLossAction, tieBreakers, isolatedFromStart, gossipKeyByNode, timings, allowPlaintextGossip,
        Optional.empty(), Hooks.NONE);
  }

  private static AgentCluster start(int n, String quorumLossAction, String tieBreakers,
      List<String> isolatedFromStart, Map<String, byte[]> gossipKeyByNode, String timings,
      boolean allowPlaintextGossip, Optional<byte[]> groupKey) throws Exception {
    return start(n, quorumLossAction, tieBreakers, isolatedFromStart, gossipKeyByNode, timings, allowPlaintextGossip,
        groupKey, Hooks.NONE);
  }

  /**
   * {@code n} agents under {@code quorumLossAction} with FAST_TIMINGS-like {@code timings}, the given tie-breakers
   * and the {@code fencing.disk} block {@code disk}, every agent opening the disk with {@code opener}.
   */
  static AgentCluster startWithDisk(int n, String quorumLossAction, String tieBreakers, String timings, String disk,
      SharedDisk.Opener opener) throws Exception {
    return start(n, quorumLossAction, tieBreakers, List.of(), Map.of(), timings + "\n  disk: " + disk, true,
        Optional.empty(), Hooks.NONE, opener);
  }

  private static AgentCluster start(int n, String quorumLossAction, String tieBreakers,
      List<String> isolatedFromStart, Map<String, byte[]> gossipKeyByNode, String timings,
      boolean allowPlaintextGossip, Optional<byte[]> groupKey, Hooks hooks) throws Exception {
    return start(n, quorumLossAction, tieBreakers, isolatedFromStart, gossipKeyByNode, timings, allowPlaintextGossip,
        groupKey, hooks, null);
  }

  private static AgentCluster start(int n, String quorumLossAction, String tieBreakers,
      List<String> isolatedFromStart, Map<String, byte[]> gossipKeyByNode, String timings,
      boolean allowPlaintextGossip, Optional<byte[]> groupKey, Hooks hooks, SharedDisk.Opener diskOpener)
      throws Exception {
    Map<String, Integer> ports = new LinkedHashMap<>();
    List<Integer> free = LoopbackPorts.distinct(n);
    for (int i = 0; i < n; i++) {
      ports.put(name(i), free.get(i));
    }
    StandaloneConfig config = StandaloneConfigLoader.parse("cluster.yaml",
        yaml(ports, quorumLossAction, tieBreakers, timings));
    AgentCluster cluster = new AgentCluster(config, quorumLossAction, tieBreakers, timings, allowPlaintextGossip);
    cluster.ports.putAll(ports);
    cluster.gossipKeyByNode.putAll(gossipKeyByNode);
    cluster.groupKey = groupKey;
    cluster.hooks = hooks;
    cluster.diskOpener = diskOpener;
    for (String name : isolatedFromStart) {
      int isolated = ports.get(name);
      for (int port : ports.values()) {
        if (port != isolated) {
          cluster.cut.cutBothWays(isolated, port);
        }
      }
    }
    return cluster.startEvery(config);
  }

  private static String yaml(Map<String, Integer> ports, String quorumLossAction, String tieBreakers,
      String timings) {
    StringBuilder yaml = new StringBuilder("group: test\nexpected:\n");
    for (Map.Entry<String, Integer> e : ports.entrySet()) {
      int i = e.getKey().charAt(e.getKey().length() - 1) - 'a';
      yaml.append("  - {name: ").append(e.getKey()).append(", address: 127.0.0.1:").append(e.getValue())
          .append(", addresses: {InternalIP: 10.0.0.").append(i + 1).append("}}\n");
    }
    yaml.append("fencing:\n  mode: Watchdog\n  watchdog: {timeout: 5s}\n  quorumLossAction: ").append(quorumLossAction)
        .append("\n  quorum: {tieBreakers: [").append(tieBreakers).append("]}\n  timings: ").append(timings)
        .append('\n');
    return yaml.toString();
  }

  /** The group's config with exactly {@code names} as expected members (ports allocated for new names). */
  StandaloneConfig groupOf(List<String> names) throws Exception {
    return groupOf(names, y -> y);
  }

  /** As {@link #groupOf(List)}, its YAML text changed by {@code edit} (e.g. another group name). */
  StandaloneConfig groupOf(List<String> names, java.util.function.UnaryOperator<String> edit) throws Exception {
    Map<String, Integer> members = new LinkedHashMap<>();
    for (String n : names) {
      members.put(n, port(n));
    }
    return StandaloneConfigLoader.parse("cluster.yaml", edit.apply(yaml(members, quorumLossAction, tieBreakers,
        timings)));
  }

  /**
   * The group's config with other timings (the text after {@code timings: }, and any lines after it such as
   * {@code disk:}) and extra lines under {@code fencing:} (each starting with two spaces and ending with a newline).
   */
  StandaloneConfig groupWith(String otherTimings, String fencingLines) throws Exception {
    return groupEdited(y -> y.replace("  timings: " + timings + "\n", "  timings: " + otherTimings + "\n")
        + fencingLines);
  }

  /** The group's config with its YAML text changed by {@code edit}. */
  StandaloneConfig groupEdited(java.util.function.UnaryOperator<String> edit) throws Exception {
    return StandaloneConfigLoader.parse("cluster.yaml", edit.apply(yaml(ports, quorumLossAction, tieBreakers,
        timings)));
  }

  /** The timings (and following lines) this cluster started with. */
  String timings() {
    return timings;
  }

  /** {@code group} as {@code name}'s config: its own key, if any; a node not in the group gets a being-removed view. */
  AgentConfig configFor(String name, StandaloneConfig group) {
    byte[] key = gossipKeyByNode.getOrDefault(name, groupKey.orElse(null));
    return withKeys(name, group, key == null ? List.of() : List.of(key), 0);
  }

  /** {@code group} as {@code name}'s config with the given keyring (first = primary) and keyring revision. */
  static AgentConfig withKeys(String name, StandaloneConfig group, List<byte[]> keys, long keyringRevision) {
    // Built directly (not fromStandalone) so a node left out of the group gets the config a controller would send it.
    return new AgentConfig(group.group(), name, group.members(), group.policy(), keys, Optional.empty(),
        Optional.empty(), AgentConfig.SOURCE_FILE, "", 0, keyringRevision);
  }

  /** Starts one more agent called {@code name} with {@code own} as its config. */
  Agent startAgent(String name, AgentConfig own) throws Exception {
    int port = port(name);
    RecordingWatchdogDevice device = new RecordingWatchdogDevice();
    EventHub hub = new EventHub(1024, InstantSource.system());
    List<Event> events = new CopyOnWriteArrayList<>();
    EventHub.Subscription[] sub = new EventHub.Subscription[1];
    sub[0] = hub.subscribe(() -> {
      EventHub.Subscription s = sub[0];
      if (s != null) {
        Event e;
        while ((e = s.poll()) != null) {
          events.add(e);
        }
      }
    });
    Event e;
    while ((e = sub[0].poll()) != null) {
      events.add(e);
    }
    AtomicInteger gossipStarts = new AtomicInteger();
    GossipFactory gossip = (cfg, meta) -> {
      gossipStarts.incrementAndGet();
      return hooks.gossip().apply(name, MultiNetworkGossip.create(cfg, meta,
          new InetSocketAddress(InetAddress.getLoopbackAddress(), port), network -> Optional.of(cut::wrap)));
    };
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FencingAgent.Dependencies deps = new FencingAgent.Dependencies(hooks.clock().apply(name),
        InstantSource.system(), hooks.device().apply(name, device), gossip, hub, registry, "test", Optional.empty(),
        Optional.empty(), Duration.ofSeconds(1), Duration.ofSeconds(1), hooks.fatalErrors(), Optional.empty(),
        allowPlaintextGossip);
    FencingAgent agent = diskOpener == null ? new FencingAgent(name, deps) : new FencingAgent(name, deps, diskOpener);
    agent.start();
    agent.applyConfig(own);
    Agent started = new Agent(name, port, agent, device, hub, registry, events, gossipStarts);
    agents.add(started);
    return started;
  }

  private int port(String name) throws java.io.IOException {
    Integer port = ports.get(name);
    if (port == null) {
      port = LoopbackPorts.free();
      ports.put(name, port);
    }
    return port;
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
