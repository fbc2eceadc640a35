package dev.fencing.agent.membership;

import dev.fencing.policy.ResolvedTimings;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * The agent's view of its group's gossip cluster: the seam between quorum/membership logic and memberlist, so the
 * logic is tested without sockets and the adapter is the only class that knows memberlist's API.
 */
public interface GossipMembership extends AutoCloseable {

  /** Starts listening; callbacks go to {@code listener}. */
  void start(GossipListener listener) throws IOException;

  /** Contacts the given {@code host:port} addresses; returns how many answered. Blocks up to the TCP timeout. */
  int join(List<String> hostPorts);

  /** The members currently known, this node included. */
  List<GossipMember> members();

  /**
   * The members as each gossip network knows them (network → members, this node included); a member on one
   * network has the single entry {@link NetworkPlan#SINGLE}.
   */
  default java.util.Map<String, List<GossipMember>> membersByNetwork() {
    return java.util.Map.of(NetworkPlan.SINGLE, members());
  }

  /** Sends one best-effort datagram user message to an address (quorum heartbeats go to expected peers). */
  void sendTo(InetSocketAddress address, byte[] message);

  /** Replaces this node's metadata and announces it. */
  void updateMeta(NodeMeta meta, Duration timeout);

  /**
   * Applies the gossip timings of {@code timings} (probe, suspicion, gossip, retransmit, push/pull) to the running
   * member without leaving the cluster; before {@link #start} they become the timings it starts with.
   */
  void applyTimings(ResolvedTimings timings);

  /**
   * Swaps the keyring of the running member to exactly {@code keys} (first = primary) without leaving the cluster:
   * new keys are installed, the primary is switched, keys not listed are removed.
   *
   * @throws IllegalStateException when this member runs without encryption (adding the first key, or dropping the
   *     last one, needs a restart: the other members would refuse the other kind of packet)
   */
  void applyKeys(List<byte[]> keys);

  /**
   * Replaces the set of members this node admits: from now on an alive message about any other name, or about an
   * expected name at another address, is dropped (and reported through {@link GossipListener#onUnexpectedMember}).
   */
  void expectMembers(ExpectedPeers expected);

  /** As {@link #expectMembers(ExpectedPeers)} for every network of {@code plan} (one member: its only network). */
  default void expectMembers(NetworkPlan plan) {
    expectMembers(plan.expectedOn(plan.networks().get(0)));
  }

  /** Traffic counters for metrics. */
  GossipTraffic traffic();

  /** Leaves gracefully (bounded by {@code timeout}) and releases sockets. */
  void leaveAndClose(Duration timeout);

  @Override
  default void close() {
    leaveAndClose(Duration.ofSeconds(1));
  }
}
