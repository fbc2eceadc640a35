package dev.fencing.memberlist.sim;

import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.EventDelegate;
import dev.fencing.memberlist.Node;
import dev.fencing.memberlist.codec.MessageCodec;
import dev.fencing.memberlist.codec.Ping;
import dev.fencing.memberlist.codec.PushPull;
import dev.fencing.memberlist.state.ProtocolOutput;
import dev.fencing.memberlist.state.SwimProtocol;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;

/**
 * A deterministic, single-threaded simulation of a memberlist cluster: every node runs the real {@link SwimProtocol},
 * messages are encoded and decoded with the real {@link MessageCodec}, and an in-memory network delivers them on
 * virtual time with per-link latency, loss and cuts (one-way or partitions). The same seed gives the same run.
 *
 * <p>Not simulated: compression, CRC and encryption (packet layers below the protocol), and the cost of processing;
 * byte counts include compound framing and CRC prefixes.
 */
public final class Simulator {
  private final long seed;
  private final SplittableRandom random;
  private final VirtualTime time = new VirtualTime();
  private final List<SimNode> nodes = new ArrayList<>();
  private final Map<InetSocketAddress, SimNode> byAddress = new HashMap<>();
  private final Map<String, SimNode> byName = new HashMap<>();
  private final Map<Long, LinkConditions> links = new HashMap<>();
  private final Map<SimNode, Integer> partitionSide = new HashMap<>();
  private final List<MembershipListener> listeners = new ArrayList<>();
  private LinkConditions defaultLink = LinkConditions.LAN;

  public Simulator(long seed) {
    this.seed = seed;
    this.random = new SplittableRandom(seed);
  }

  public long seed() {
    return seed;
  }

  public VirtualTime time() {
    return time;
  }

  SplittableRandom random() {
    return random;
  }

  public List<SimNode> nodes() {
    return List.copyOf(nodes);
  }

  public SimNode node(String name) {
    return byName.get(name);
  }

  public void addListener(MembershipListener listener) {
    listeners.add(listener);
  }

  /**
   * Adds and starts a node with {@code config} (its name must be unique; bind/advertise settings and the transport are
   * ignored: the node gets address 10.x.y.z:7946).
   */
  public SimNode addNode(Config config) {
    if (byName.containsKey(config.name())) {
      throw new IllegalArgumentException("duplicate node name " + config.name());
    }
    int index = nodes.size();
    byte[] ip = {10, (byte) (index >> 16), (byte) (index >> 8), (byte) index};
    InetSocketAddress address;
    try {
      address = new InetSocketAddress(InetAddress.getByAddress(ip), 7946);
    } catch (UnknownHostException e) {
      throw new IllegalStateException("4-byte address rejected", e);
    }
    EventDelegate user = config.events();
    SimNode[] self = new SimNode[1];
    EventDelegate observed =
        new EventDelegate() {
          @Override
          public void notifyJoin(Node node) {
            if (user != null) {
              user.notifyJoin(node);
            }
            publish(self[0], node, MembershipListener.Kind.JOIN);
          }

          @Override
          public void notifyLeave(Node node) {
            if (user != null) {
              user.notifyLeave(node);
            }
            publish(self[0], node, MembershipListener.Kind.LEAVE);
          }

          @Override
          public void notifyUpdate(Node node) {
            if (user != null) {
              user.notifyUpdate(node);
            }
            publish(self[0], node, MembershipListener.Kind.UPDATE);
          }
        };
    Config effective = config.toBuilder().events(observed).transport(null).build();
    SimNode node = new SimNode(this, index, effective, address);
    self[0] = node;
    nodes.add(node);
    byAddress.put(address, node);
    byName.put(config.name(), node);
    SwimProtocol protocol =
        new SwimProtocol(
            effective,
            ip,
            7946,
            time,
            node.timers(),
            new SplittableRandom(seed * 31 + index),
            MessageCodec::encode,
            new NodeOutput(node),
            node.counters());
    node.attach(protocol);
    protocol.start();
    return node;
  }

  private void publish(SimNode observer, Node subject, MembershipListener.Kind kind) {
    for (MembershipListener l : listeners) {
      l.onEvent(observer, subject, kind, time.nanos());
    }
  }

  /** {@code joiner} does a join push/pull with {@code seed} (asynchronous, like every stream in the simulation). */
  public void join(SimNode joiner, SimNode seedNode) {
    joiner.counters().pushPulls.increment();
    new NodeOutput(joiner).exchange(seedNode.address(), joiner.protocol().localState(true));
  }

  /** Advances virtual time by {@code d}. */
  public void runFor(Duration d) {
    time.runUntil(time.nanos() + d.toNanos());
  }

  /**
   * Advances virtual time in steps of {@code step} until {@code condition} holds or {@code max} passed.
   *
   * @return whether the condition held
   */
  public boolean runUntil(BooleanSupplier condition, Duration max, Duration step) {
    long end = time.nanos() + max.toNanos();
    while (time.nanos() < end) {
      if (condition.getAsBoolean()) {
        return true;
      }
      time.runUntil(Math.min(end, time.nanos() + step.toNanos()));
    }
    return condition.getAsBoolean();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Network conditions

  public void setDefaultLink(LinkConditions conditions) {
    this.defaultLink = conditions;
  }

  /** Sets the conditions of the one-way link {@code from → to}. */
  public void setLink(SimNode from, SimNode to, LinkConditions conditions) {
    links.put(key(from, to), conditions);
  }

  /** Cuts the one-way link {@code from → to} (packets and streams). */
  public void cut(SimNode from, SimNode to) {
    setLink(from, to, link(from, to).withCut(true));
  }

  /** Splits the cluster: {@code side} can only talk among itself, everyone else among themselves. */
  public void partition(Collection<SimNode> side) {
    partitionSide.clear();
    side.forEach(n -> partitionSide.put(n, 1));
  }

  /** Removes partitions and every per-link override. */
  public void heal() {
    partitionSide.clear();
    links.clear();
  }

  private static long key(SimNode from, SimNode to) {
    return ((long) from.index() << 32) | to.index();
  }

  private LinkConditions link(SimNode from, SimNode to) {
    return links.getOrDefault(key(from, to), defaultLink);
  }

  private boolean reachable(SimNode from, SimNode to) {
    if (!partitionSide.isEmpty()
        && partitionSide.getOrDefault(from, 0).intValue() != partitionSide.getOrDefault(to, 0).intValue()) {
      return false;
    }
    return !link(from, to).cut();
  }

  private long latency(SimNode from, SimNode to) {
    LinkConditions c = link(from, to);
    return c.latencyNanos() + (c.jitterNanos() > 0 ? random.nextLong(c.jitterNanos() + 1) : 0);
  }

  static int packetBytes(List<byte[]> parts, boolean crc) {
    int bytes = crc ? 5 : 0;
    if (parts.size() > 1) {
      bytes += 2 + 2 * parts.size();
    }
    for (byte[] p : parts) {
      bytes += p.length;
    }
    return bytes;
  }

  /** The in-memory network as one node's {@link ProtocolOutput}. */
  private final class NodeOutput implements ProtocolOutput {
    private final SimNode from;

    NodeOutput(SimNode from) {
      this.from = from;
    }

    @Override
    public void sendPacket(InetSocketAddress to, List<byte[]> messages, boolean crc) {
      int bytes = packetBytes(messages, crc);
      from.counters().packetsSent.increment();
      from.counters().bytesSent.add(bytes);
      SimNode dest = byAddress.get(to);
      if (dest == null || !reachable(from, dest)) {
        return;
      }
      LinkConditions c = link(from, dest);
      if (c.loss() > 0 && random.nextDouble() < c.loss()) {
        return;
      }
      List<byte[]> copy = List.copyOf(messages);
      InetSocketAddress src = from.address();
      time.schedule(latency(from, dest), () -> dest.receivePacket(copy, src, bytes));
    }

    @Override
    public void pushPull(InetSocketAddress to, PushPull request) {
      exchange(to, request);
    }

    void exchange(InetSocketAddress to, PushPull request) {
      SimNode dest = byAddress.get(to);
      if (dest == null || !reachable(from, dest)) {
        return;
      }
      long started = time.nanos();
      long timeout = from.config().tcpTimeout().toNanos();
      time.schedule(
          latency(from, dest),
          () ->
              dest.process(
                  () -> {
                    PushPull reply = dest.protocol().handlePushPull(request);
                    if (!reachable(dest, from)) {
                      return;
                    }
                    time.schedule(
                        latency(dest, from),
                        () -> {
                          if (!from.crashed() && time.nanos() - started <= timeout) {
                            from.process(() -> from.protocol().mergeRemoteState(reply));
                          }
                        });
                  }));
    }

    @Override
    public void streamPing(InetSocketAddress to, Ping ping, long timeoutNanos) {
      SimNode dest = byAddress.get(to);
      if (dest == null || !reachable(from, dest)) {
        return;
      }
      long started = time.nanos();
      time.schedule(
          latency(from, dest),
          () ->
              dest.process(
                  () -> {
                    boolean forMe = ping.node() == null || ping.node().isEmpty() || ping.node().equals(dest.name());
                    if (!forMe || !reachable(dest, from)) {
                      return;
                    }
                    time.schedule(
                        latency(dest, from),
                        () -> {
                          if (!from.crashed() && time.nanos() - started <= timeoutNanos) {
                            from.process(() -> from.protocol().streamPingResult(ping.seqNo(), true));
                          }
                        });
                  }));
    }
  }
}
