package dev.fencing.agent.membership;

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

  /** Sends one best-effort datagram user message to an address (quorum heartbeats go to expected peers). */
  void sendTo(InetSocketAddress address, byte[] message);

  /** Replaces this node's metadata and announces it. */
  void updateMeta(NodeMeta meta, Duration timeout);

  /** Traffic counters for metrics. */
  GossipTraffic traffic();

  /** Leaves gracefully (bounded by {@code timeout}) and releases sockets. */
  void leaveAndClose(Duration timeout);

  @Override
  default void close() {
    leaveAndClose(Duration.ofSeconds(1));
  }
}
