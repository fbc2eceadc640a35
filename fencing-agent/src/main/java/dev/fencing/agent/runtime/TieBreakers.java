package dev.fencing.agent.runtime;

import dev.fencing.agent.quorum.LowestNameTieBreaker;
import dev.fencing.agent.quorum.TieBreaker;
import dev.fencing.policy.TieBreakerKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Builds the configured tie-breakers, in order. Every kind the agent accepts answers for real. */
final class TieBreakers {

  private TieBreakers() {}

  /**
   * @param kinds the configured kinds, in order
   * @param controlPlane the controller client's tie-breaker, when the agent has a controller
   * @param apiReachable the API server probe's tie-breaker, when the agent runs one
   * @param disk the shared-disk tie-breaker, when the group has a disk
   * @throws IllegalArgumentException for a kind this agent cannot answer (the config is rejected): {@code Disk}
   *     without {@code disk.device}, {@code ControlPlane} without a controller, {@code APIReachable} without a
   *     prober
   */
  static List<TieBreaker> of(List<TieBreakerKind> kinds, Optional<TieBreaker> controlPlane,
      Optional<TieBreaker> apiReachable, Optional<TieBreaker> disk) {
    List<TieBreaker> out = new ArrayList<>();
    for (TieBreakerKind kind : kinds) {
      out.add(switch (kind) {
        case LOWEST_NAME -> new LowestNameTieBreaker();
        case DISK -> disk.orElseThrow(() -> new IllegalArgumentException(
            "tie-breaker Disk needs disk.device (a shared block device prepared with 'sbd -d DEVICE -4 90 create';"
                + " msgwait 90s covers the default timings, see Choosing msgwait in the fencing-agent README)"));
        case API_REACHABLE -> apiReachable.orElseThrow(() -> new IllegalArgumentException(
            "tie-breaker APIReachable needs the API server probe, which this agent does not run"));
        case CONTROL_PLANE -> controlPlane.orElseThrow(() -> new IllegalArgumentException(
            "tie-breaker ControlPlane needs a controller (run with --controller)"));
      });
    }
    return out;
  }
}
