package dev.fencing.memberlist.sim;

import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.NodeState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/** Builds simulated clusters for tests and benchmarks. */
final class SimClusters {
  private SimClusters() {}

  /** Starts {@code n} nodes named node-0.. with {@code base} and joins each to node-0, one every 10 ms. */
  static List<SimNode> start(Simulator sim, int n, Config base) {
    return start(sim, n, base, UnaryOperator.identity());
  }

  static List<SimNode> start(Simulator sim, int n, Config base, UnaryOperator<Config.Builder> perNode) {
    List<SimNode> nodes = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      SimNode node = sim.addNode(perNode.apply(base.toBuilder().name("node-" + i)).build());
      nodes.add(node);
      if (i > 0) {
        sim.join(node, nodes.get(0));
      }
      sim.runFor(Duration.ofMillis(10));
    }
    return nodes;
  }

  /** Every running node sees exactly the running nodes, all alive. */
  static boolean converged(List<SimNode> nodes) {
    long running = nodes.stream().filter(x -> !x.crashed()).count();
    for (SimNode node : nodes) {
      if (node.crashed()) {
        continue;
      }
      if (node.protocol().count(NodeState.ALIVE) != running || node.protocol().numMembers() != running) {
        return false;
      }
    }
    return true;
  }
}
