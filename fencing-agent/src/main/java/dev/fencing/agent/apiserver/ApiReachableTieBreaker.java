package dev.fencing.agent.apiserver;

import dev.fencing.agent.quorum.TieBreakVerdict;
import dev.fencing.agent.quorum.TieBreaker;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;

/**
 * {@code APIReachable}: at an exact-half tie this side holds quorum while this node reaches the Kubernetes API server
 * ({@code /readyz} answered 200, probed by {@link ReadyzProber} on its own thread). The answer counts only from a
 * probe younger than one probe interval (the heartbeat interval) plus its timeout, and the win ends when that result becomes too old
 * ({@code heldUntil} is capped there), so a stalled prober cannot keep a node fed. Anything else is no answer, never
 * LOSE: the other half may reach the API server too.
 *
 * <p><b>Not split-brain safe</b>: both halves of a split may reach the API server and both keep quorum. Use it only
 * where that is acceptable, after a safe tie-breaker (LowestName, ControlPlane) or instead of fencing both halves.
 */
public final class ApiReachableTieBreaker implements TieBreaker {

  private final ReadyzProber prober;

  public ApiReachableTieBreaker(ReadyzProber prober) {
    this.prober = Objects.requireNonNull(prober, "prober");
  }

  @Override
  public String name() {
    return "APIReachable";
  }

  @Override
  public void prepare(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
    prober.request(nowNanos);
  }

  @Override
  public TieBreakVerdict evaluate(SortedSet<String> side, SortedSet<String> expected, long nowNanos) {
    prober.request(nowNanos);
    Optional<String> problem = prober.problem();
    if (problem.isPresent()) {
      return TieBreakVerdict.noAnswer("APIReachable: " + problem.get());
    }
    Optional<ReadyzProber.Result> latest = prober.latest();
    Optional<java.time.Duration> freshFor = prober.freshFor();
    if (latest.isEmpty() || freshFor.isEmpty()) {
      return TieBreakVerdict.noAnswer("APIReachable: no probe result yet");
    }
    ReadyzProber.Result r = latest.get();
    long maxAge = freshFor.get().toNanos();
    long age = nowNanos - r.completedAtNanos();
    if (!r.ready()) {
      return TieBreakVerdict.noAnswer("APIReachable: /readyz " + r.detail());
    }
    if (age > maxAge) {
      return TieBreakVerdict.noAnswer("APIReachable: last /readyz 200 is " + age / 1_000_000 + "ms old");
    }
    return TieBreakVerdict.winUntil("APIReachable: /readyz 200 " + Math.max(0, age) / 1_000_000 + "ms ago",
        r.completedAtNanos() + maxAge);
  }
}
