package dev.fencing.agent.metrics;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@code /healthz} (liveness) and {@code /readyz} (readiness) answer, as of one reading of the agent.
 *
 * <p>Live while the quorum loop completed an evaluation within {@link #stuckAfter} (the larger of
 * {@value #MIN_STUCK_SECONDS} s and {@value #STUCK_TICKS} evaluation ticks): a stuck loop also stops the watchdog
 * feed, so the kubelet restarting the pod is the right answer. Ready when live, a config is known and quorum is
 * held: a DaemonSet rollout (maxUnavailable 1) then never moves on to the next node while this one has no quorum.
 *
 * @param stopped the agent was stopped
 * @param sinceLastEvaluation how long ago the quorum loop last completed an evaluation (or, before the first one,
 *     how long ago the agent was created)
 * @param evaluationTick the configured evaluation tick (the default before a config is known)
 * @param configKnown a config (file, controller or cache) is in effect
 * @param quorumHeld quorum was held at the latest evaluation
 */
public record AgentHealth(
    boolean stopped, Duration sinceLastEvaluation, Duration evaluationTick, boolean configKnown, boolean quorumHeld) {

  /** Lower bound of the stuck-loop threshold, in seconds. */
  public static final int MIN_STUCK_SECONDS = 10;
  /** Evaluation ticks without a completed evaluation after which the loop counts as stuck. */
  public static final int STUCK_TICKS = 5;

  public AgentHealth {
    Objects.requireNonNull(sinceLastEvaluation, "sinceLastEvaluation");
    Objects.requireNonNull(evaluationTick, "evaluationTick");
  }

  /** How long the loop may go without a completed evaluation before it counts as stuck: max(10 s, 5 ticks). */
  public static Duration stuckAfter(Duration evaluationTick) {
    Duration ticks = evaluationTick.multipliedBy(STUCK_TICKS);
    Duration floor = Duration.ofSeconds(MIN_STUCK_SECONDS);
    return ticks.compareTo(floor) > 0 ? ticks : floor;
  }

  /** Empty when live; otherwise the one-line reason for the 503 of {@code /healthz}. */
  public Optional<String> liveness() {
    if (stopped) {
      return Optional.of("agent stopped");
    }
    Duration bound = stuckAfter(evaluationTick);
    if (sinceLastEvaluation.compareTo(bound) >= 0) {
      return Optional.of("quorum loop stuck: last evaluation " + sinceLastEvaluation.toMillis() + "ms ago (bound "
          + bound.toMillis() + "ms)");
    }
    return Optional.empty();
  }

  /** Empty when ready; otherwise the one-line reason for the 503 of {@code /readyz}. */
  public Optional<String> readiness() {
    Optional<String> notLive = liveness();
    if (notLive.isPresent()) {
      return notLive;
    }
    if (!configKnown) {
      return Optional.of("no config");
    }
    if (!quorumHeld) {
      return Optional.of("quorum not held");
    }
    return Optional.empty();
  }
}
