package dev.fencing.memberlist.sim;

import java.time.Duration;

/**
 * The Lifeguard false-positive experiment over several seeds and slowness levels (not a test: prints figures). Run with
 *
 * <pre>
 * ./mvnw -pl memberlist test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=dev.fencing.memberlist.sim.LifeguardBenchmark -Dexec.args="100 10 5 300"
 * </pre>
 *
 * Arguments: cluster size (100), slow members (10), seeds (5), seconds per run (300).
 */
public final class LifeguardBenchmark {
  private LifeguardBenchmark() {}

  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 100;
    int slow = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    int seeds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    Duration duration = Duration.ofSeconds(args.length > 3 ? Long.parseLong(args[3]) : 300);
    System.out.printf(
        "Lifeguard benchmark: N=%d, %d slow members, %d seeds, %ds per run, LAN config%n",
        n, slow, seeds, duration.toSeconds());
    for (int maxDelay : new int[] {2, 5, 10, 20}) {
      int[] fp = new int[2];
      int[] victims = new int[2];
      int[] slowDead = new int[2];
      long[] suspicions = new long[2];
      double[] median = new double[2];
      for (int s = 0; s < seeds; s++) {
        long seed = 7000 + s;
        for (int mode = 0; mode < 2; mode++) {
          LifeguardExperiment.Result r =
              LifeguardExperiment.run(mode == 1, seed, n, slow, Duration.ofSeconds(maxDelay), duration);
          fp[mode] += r.healthyFalsePositives();
          victims[mode] += r.healthyVictims();
          slowDead[mode] += r.slowDeclaredDead();
          suspicions[mode] += r.suspicionsRaised();
          median[mode] += r.medianDetectionSeconds() / seeds;
        }
      }
      System.out.printf(
          "slow delay 0..%2ds | healthy FP off=%4d on=%4d (%s) | distinct healthy victims off=%3d on=%3d |"
              + " slow declared dead off=%4d on=%4d | suspicions off=%6d on=%6d |"
              + " median detection of a real crash off=%.1fs on=%.1fs%n",
          maxDelay,
          fp[0],
          fp[1],
          fp[1] == 0 ? (fp[0] == 0 ? "none either way" : "all avoided") : String.format("%.1fx fewer", (double) fp[0] / fp[1]),
          victims[0],
          victims[1],
          slowDead[0],
          slowDead[1],
          suspicions[0],
          suspicions[1],
          median[0],
          median[1]);
    }
  }
}
