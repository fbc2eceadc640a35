package dev.fencing.agent.quorum.sim;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Random fault schedules for {@link ScaleSimulation}, fixed by a seed: episodes of a random fault held for 15–25 s
 * (longer than {@code T_stop}) followed by a heal and 15 s of calm, plus independent process stalls.
 */
final class ScaleScenario {

  static final long SECOND = 1_000_000_000L;

  /** The faults of one run. */
  record Plan(List<ScaleSimulation.Change> changes, List<ScaleSimulation.Stall> stalls, List<String> episodes) {}

  private ScaleScenario() {}

  /**
   * @param n group size
   * @param seed the schedule's seed
   * @param durationNanos run length; the first fault comes after 20 s of warm-up
   * @param stallEveryNanos mean time between two stalls (each of one random node, 0.5–8 s)
   */
  static Plan random(int n, long seed, long durationNanos, long stallEveryNanos) {
    SplittableRandom random = new SplittableRandom(seed);
    List<ScaleSimulation.Change> changes = new ArrayList<>();
    List<String> episodes = new ArrayList<>();
    int quorum = n / 2 + 1;
    long t = 20 * SECOND;
    while (t + 40 * SECOND < durationNanos) {
      int[] labels = new int[n];
      Set<Integer> open = new HashSet<>();
      int[] order = shuffled(n, random);
      int kind = random.nextInt(4);
      String what;
      if (kind == 0) {
        int majority = quorum + random.nextInt(Math.max(1, (int) (0.8 * n) - quorum + 1));
        boolean three = random.nextBoolean() && n - majority >= 2;
        int second = three ? 1 + random.nextInt(n - majority - 1) : n - majority;
        for (int i = 0; i < n; i++) {
          labels[order[i]] = i < majority ? 0 : i < majority + second ? 1 : 2;
        }
        what = "partition " + majority + "/" + second + (three ? "/" + (n - majority - second) : "");
      } else if (kind == 1) {
        int size = 1 + random.nextInt(Math.max(1, n / 5));
        boolean sendOnly = random.nextBoolean();
        for (int i = 0; i < size; i++) {
          labels[order[i]] = 1;
        }
        open.add(sendOnly ? 1 * 65536 : 1);
        what = "one-way cut of " + size + (sendOnly ? " (they only send)" : " (they only receive)");
      } else if (kind == 2) {
        labels[order[0]] = 1;
        what = "isolate 1";
      } else {
        for (int i = 0; i < n; i++) {
          labels[order[i]] = i < n / 2 ? 0 : 1;
        }
        what = "split " + (n / 2) + "/" + (n - n / 2) + " (no tie-breaker)";
      }
      changes.add(new ScaleSimulation.Change(t, new Topology(labels, Set.copyOf(open))));
      episodes.add(String.format("t=%ds %s", t / SECOND, what));
      t += (15 + random.nextInt(11)) * SECOND;
      changes.add(new ScaleSimulation.Change(t, Topology.connected(n)));
      t += 15 * SECOND;
    }
    List<ScaleSimulation.Stall> stalls = new ArrayList<>();
    for (long s = 10 * SECOND; stallEveryNanos > 0 && s < durationNanos;
        s += (long) (random.nextDouble() * 2 * stallEveryNanos)) {
      long length = SECOND / 2 + (long) (random.nextDouble() * 7.5 * SECOND);
      stalls.add(new ScaleSimulation.Stall(random.nextInt(n), s, s + length));
    }
    return new Plan(changes, stalls, episodes);
  }

  private static int[] shuffled(int n, SplittableRandom random) {
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    for (int i = n - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int tmp = order[i];
      order[i] = order[j];
      order[j] = tmp;
    }
    return order;
  }
}
