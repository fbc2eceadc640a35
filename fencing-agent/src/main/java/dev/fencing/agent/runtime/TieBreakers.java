package dev.fencing.agent.runtime;

import dev.fencing.agent.quorum.LowestNameTieBreaker;
import dev.fencing.agent.quorum.NeverAnsweringTieBreaker;
import dev.fencing.agent.quorum.TieBreaker;
import dev.fencing.policy.TieBreakerKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Builds the configured tie-breakers, in order. */
final class TieBreakers {

  private TieBreakers() {}

  /**
   * @param kinds the configured kinds, in order
   * @param controlPlane the controller client's tie-breaker, when the agent has a controller
   */
  static List<TieBreaker> of(List<TieBreakerKind> kinds, Optional<TieBreaker> controlPlane) {
    List<TieBreaker> out = new ArrayList<>();
    for (TieBreakerKind kind : kinds) {
      out.add(switch (kind) {
        case LOWEST_NAME -> new LowestNameTieBreaker();
        case DISK -> NeverAnsweringTieBreaker.disk();
        case API_REACHABLE -> NeverAnsweringTieBreaker.apiReachable();
        case CONTROL_PLANE -> controlPlane.orElseGet(
            () -> new NeverAnsweringTieBreaker("ControlPlane", "no controller configured (standalone agent)"));
      });
    }
    return out;
  }
}
