package dev.fencing.memberlist.state;

import dev.fencing.memberlist.NodeState;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;

/**
 * The members this node knows, in probe order. SWIM's round-robin probing over a list that is reshuffled on every pass
 * bounds the time until a failed member is probed (at most two passes) while staying random; new members are
 * inserted at a random position for the same reason.
 */
final class NodeTable {
  private final Map<String, NodeRecord> byName = new HashMap<>();
  private final List<NodeRecord> order = new ArrayList<>();
  private final RandomGenerator random;
  private int probeIndex;

  NodeTable(RandomGenerator random) {
    this.random = random;
  }

  NodeRecord get(String name) {
    return byName.get(name);
  }

  int size() {
    return order.size();
  }

  Collection<NodeRecord> all() {
    return Collections.unmodifiableList(order);
  }

  /** Adds a node at a random position of the probe order. */
  void insert(NodeRecord node) {
    byName.put(node.name(), node);
    int offset = order.isEmpty() ? 0 : random.nextInt(order.size() + 1);
    order.add(node);
    Collections.swap(order, offset, order.size() - 1);
  }

  /**
   * The next node to probe, or null if there is none; skips {@code self} and dead/left nodes. On wrap-around the
   * list is reaped and reshuffled first.
   */
  NodeRecord nextProbeTarget(String self, Runnable onWrap) {
    int checked = 0;
    while (checked <= order.size()) {
      if (probeIndex >= order.size()) {
        onWrap.run();
        probeIndex = 0;
        checked++;
        continue;
      }
      NodeRecord candidate = order.get(probeIndex++);
      if (!candidate.name().equals(self) && !candidate.state().deadOrLeft()) {
        return candidate;
      }
      checked++;
    }
    return null;
  }

  /** Removes dead and left nodes whose state changed longer than {@code ageNanos} ago, then shuffles. */
  void reapAndShuffle(long nowNanos, long ageNanos, Consumer<NodeRecord> reaped) {
    Iterator<NodeRecord> it = order.iterator();
    while (it.hasNext()) {
      NodeRecord n = it.next();
      if (n.state().deadOrLeft() && nowNanos - n.stateChangeNanos() > ageNanos) {
        it.remove();
        byName.remove(n.name());
        reaped.accept(n);
      }
    }
    for (int i = order.size() - 1; i > 0; i--) {
      Collections.swap(order, i, random.nextInt(i + 1));
    }
  }

  /**
   * Up to {@code k} distinct random nodes accepted by {@code filter}: a lazy Fisher-Yates walk over the table, so it
   * finds every qualifying node when fewer than k exist (memberlist 0.2.2's 3·n random draws could miss the only
   * eligible indirect-probe peer of a 3-node cluster).
   */
  List<NodeRecord> randomNodes(int k, Predicate<NodeRecord> filter) {
    List<NodeRecord> picked = new ArrayList<>(k);
    int n = order.size();
    int[] index = new int[n];
    for (int i = 0; i < n; i++) {
      index[i] = i;
    }
    for (int i = 0; i < n && picked.size() < k; i++) {
      int j = i + random.nextInt(n - i);
      int chosen = index[j];
      index[j] = index[i];
      NodeRecord candidate = order.get(chosen);
      if (filter.test(candidate)) {
        picked.add(candidate);
      }
    }
    return picked;
  }

  int count(NodeState state) {
    int c = 0;
    for (NodeRecord n : order) {
      if (n.state() == state) {
        c++;
      }
    }
    return c;
  }
}
