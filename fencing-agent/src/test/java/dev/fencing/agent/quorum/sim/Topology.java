package dev.fencing.agent.quorum.sim;

import java.util.Arrays;
import java.util.Set;

/**
 * Who can send to whom: every node carries a label; nodes with the same label reach each other both ways; between
 * two labels nothing passes, except in the directions listed in {@code openOneWay} ({@code from * 65536 + to}),
 * which models one-way cuts. The bidirectional components are therefore exactly the label classes.
 *
 * @param labels one label per node
 * @param openOneWay label pairs {@code from → to} that still deliver while {@code to → from} does not
 */
record Topology(int[] labels, Set<Integer> openOneWay) {

  static Topology connected(int n) {
    return new Topology(new int[n], Set.of());
  }

  boolean delivers(int from, int to) {
    int a = labels[from];
    int b = labels[to];
    return a == b || openOneWay.contains(a * 65536 + b);
  }

  /** Size of the bidirectional component of {@code node}. */
  int componentSize(int node) {
    int label = labels[node];
    return (int) Arrays.stream(labels).filter(l -> l == label).count();
  }

  int[] componentSizes() {
    int max = Arrays.stream(labels).max().orElse(0);
    int[] sizes = new int[max + 1];
    for (int l : labels) {
      sizes[l]++;
    }
    return sizes;
  }
}
