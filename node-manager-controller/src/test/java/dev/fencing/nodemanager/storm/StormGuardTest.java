package dev.fencing.nodemanager.storm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.policy.MinHealthy;
import dev.fencing.policy.StormLimits;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class StormGuardTest {

    private static final Instant T0 = Instant.parse("2026-11-23T10:00:00Z");
    private static final Set<String> SIX = Set.of("n1", "n2", "n3", "n4", "n5", "n6");

    private final Map<String, GroupCensus> groups = new HashMap<>();
    private final StormGuard guard = new StormGuard(ClusterStormLimits.DEFAULTS, () -> Map.copyOf(groups));

    private void group(String name, StormLimits limits, Set<String> members, Set<String> down, Set<String> fencing,
                       boolean stormRecorded) {
        Set<String> healthy = new TreeSet<>(members);
        healthy.removeAll(down);
        healthy.removeAll(fencing);
        groups.put(name, new GroupCensus(name, limits, members, healthy, fencing, stormRecorded, true));
    }

    // The census of a group whose spec is invalid: listed, its fencings still in progress, but marked.
    private void invalidGroup(String name, Set<String> members, Set<String> down, Set<String> fencing) {
        group(name, StormLimits.DEFAULTS, members, down, fencing, false);
        GroupCensus g = groups.get(name);
        groups.put(name, new GroupCensus(name, g.limits(), g.members(), g.healthy(), g.fencing(), false, false));
    }

    @Test
    void halfTheGroupFailingAtOnceFencesNobody() {
        group("g", StormLimits.DEFAULTS, SIX, Set.of("n4", "n5", "n6"), Set.of(), false);

        for (String n : Set.of("n4", "n5", "n6")) {
            StormGuard.Decision d = guard.decide("g", n, T0);
            assertThat(d.allowed()).isFalse();
            assertThat(d.limit()).isEqualTo(StormLimit.MIN_HEALTHY);
            assertThat(d.message()).contains("only 3 of 6 nodes of group g are healthy")
                    .contains("minHealthy 50%").contains("n4, n5, n6");
        }
        assertThat(guard.inProgress("g")).isEmpty();
    }

    @Test
    void oneNodeFailingAloneIsAdmittedOnceAndCountsAsInProgress() {
        group("g", StormLimits.DEFAULTS, SIX, Set.of("n6"), Set.of(), false);

        StormGuard.Admission first = guard.admit("g", "n6", T0);
        assertThat(first.allowed()).as(first.reason()).isTrue();
        assertThat(guard.inProgress("g")).containsExactly("n6");
        assertThat(guard.admit("g", "n6", T0.plusSeconds(1)).allowed()).isTrue();
    }

    @Test
    void aSecondFailureWaitsForTheFirstFencingToFinish() {
        group("g", StormLimits.DEFAULTS, SIX, Set.of("n5", "n6"), Set.of(), false);
        assertThat(guard.admit("g", "n5", T0).allowed()).isTrue();

        StormGuard.Decision second = guard.decide("g", "n6", T0);
        assertThat(second.limit()).isEqualTo(StormLimit.MAX_CONCURRENT);
        assertThat(second.message()).contains("1 fencing(s) in progress (n5)").contains("maxConcurrent 1");

        guard.finished("g", "n5", T0.plusSeconds(5));
        assertThat(guard.admit("g", "n6", T0.plusSeconds(5)).allowed()).isTrue();
    }

    @Test
    void anAdoptedFencingCountsTowardsMaxConcurrentUntilItIsFinished() {
        // n5's power stage was started by the previous leader: no taint yet, only its open NodeFencing record.
        group("g", StormLimits.DEFAULTS, SIX, Set.of("n5", "n6"), Set.of(), false);
        guard.adopt("g", "n5");

        StormGuard.Decision d = guard.decide("g", "n6", T0);
        assertThat(d.limit()).isEqualTo(StormLimit.MAX_CONCURRENT);
        assertThat(d.message()).contains("(n5)");

        guard.finished("g", "n5", T0.plusSeconds(5));
        assertThat(guard.admit("g", "n6", T0.plusSeconds(5)).allowed()).isTrue();
    }

    @Test
    void fencingsVisibleInTheClusterCountForANewGuard() {
        // The previous leader tainted n5: a fresh guard (new leader) sees it through the census.
        group("g", StormLimits.DEFAULTS, SIX, Set.of("n6"), Set.of("n5"), false);

        StormGuard.Decision d = guard.decide("g", "n6", T0);
        assertThat(d.limit()).isEqualTo(StormLimit.MAX_CONCURRENT);
        assertThat(d.message()).contains("(n5)");
    }

    @Test
    void clusterWideMaxConcurrentCountsEveryGroup() {
        group("a", StormLimits.DEFAULTS, SIX, Set.of("n1"), Set.of("n1"), false);
        group("b", StormLimits.DEFAULTS, Set.of("m1", "m2", "m3", "m4"), Set.of("m1"), Set.of("m1"), false);
        group("c", StormLimits.DEFAULTS, Set.of("k1", "k2", "k3", "k4"), Set.of("k1"), Set.of(), false);

        StormGuard.Decision d = guard.decide("c", "k1", T0);
        assertThat(d.limit()).isEqualTo(StormLimit.CLUSTER_MAX_CONCURRENT);
        assertThat(d.message()).contains("a/n1").contains("b/m1").contains("--storm-max-concurrent 2");
    }

    /**
     * An invalid edit of a group's spec does not end the fencings in progress there (their taints and records stay),
     * so they still count against {@code --storm-max-concurrent}: otherwise another group could start as many again.
     */
    @Test
    void fencingsOfAGroupWithAnInvalidSpecStillCountClusterWide() {
        group("a", new StormLimits(null, 2, null), SIX, Set.of("n5", "n6"), Set.of(), false);
        group("b", StormLimits.DEFAULTS, Set.of("m1", "m2", "m3", "m4"), Set.of("m1"), Set.of(), false);
        assertThat(guard.admit("a", "n5", T0).allowed()).isTrue();
        assertThat(guard.admit("a", "n6", T0).allowed()).isTrue();

        // A's spec turns invalid; its two fencings go on (tainted now).
        invalidGroup("a", SIX, Set.of(), Set.of("n5", "n6"));

        StormGuard.Decision d = guard.decide("b", "m1", T0.plusSeconds(5));
        assertThat(d.limit()).isEqualTo(StormLimit.CLUSTER_MAX_CONCURRENT);
        assertThat(d.message()).contains("a/n5").contains("a/n6").contains("--storm-max-concurrent 2");
    }

    @Test
    void nothingInAGroupWithAnInvalidSpecIsAdmittedButItsNodesCountForTheClusterMinHealthy() {
        StormGuard strict = new StormGuard(new ClusterStormLimits(MinHealthy.parse("50%"), 10),
                () -> Map.copyOf(groups));
        // A's spec is invalid and 3 of its 4 nodes are being fenced; B alone keeps 2 of 3 healthy.
        invalidGroup("a", Set.of("a1", "a2", "a3", "a4"), Set.of(), Set.of("a1", "a2", "a3"));
        group("b", StormLimits.DEFAULTS, Set.of("b1", "b2", "b3"), Set.of("b1"), Set.of(), false);

        StormGuard.Decision inB = strict.decide("b", "b1", T0);
        assertThat(inB.limit()).isEqualTo(StormLimit.CLUSTER_MIN_HEALTHY);
        assertThat(inB.message()).contains("only 3 of 7 nodes of all 2 fencing groups");

        StormGuard.Decision inA = guard.decide("a", "a4", T0);
        assertThat(inA.limit()).isEqualTo(StormLimit.UNKNOWN_GROUP);
        assertThat(inA.message()).contains("spec of group a is invalid");
        assertThat(guard.assess("a", T0)).isEmpty();
    }

    @Test
    void clusterWideMinHealthyHoldsWhenManyGroupsFailTogether() {
        // Each small group keeps 2 of 3 healthy, but the cluster has lost 4 of 8.
        StormGuard strict = new StormGuard(new ClusterStormLimits(MinHealthy.parse("50%"), 10),
                () -> Map.copyOf(groups));
        group("a", StormLimits.DEFAULTS, Set.of("a1", "a2", "a3"), Set.of("a1"), Set.of(), false);
        group("b", StormLimits.DEFAULTS, Set.of("b1", "b2", "b3"), Set.of("b1"), Set.of(), false);
        group("c", StormLimits.DEFAULTS, Set.of("c1", "c2"), Set.of("c1", "c2"), Set.of(), false);

        StormGuard.Decision d = strict.decide("a", "a1", T0);
        assertThat(d.limit()).isEqualTo(StormLimit.CLUSTER_MIN_HEALTHY);
        assertThat(d.message()).contains("only 4 of 8 nodes of all 3 fencing groups");
    }

    @Test
    void afterAStormNoFencingStartsUntilTheCooldownPassed() {
        StormLimits limits = new StormLimits(null, null, Duration.ofMinutes(10));
        group("g", limits, SIX, Set.of("n4", "n5", "n6"), Set.of(), false);
        assertThat(guard.decide("g", "n6", T0).limit()).isEqualTo(StormLimit.MIN_HEALTHY);

        // Two came back; n6 alone is still down.
        group("g", limits, SIX, Set.of("n6"), Set.of(), false);
        StormGuard.Decision during = guard.decide("g", "n6", T0.plus(Duration.ofMinutes(9)));
        assertThat(during.limit()).isEqualTo(StormLimit.COOLDOWN);
        assertThat(during.message()).contains("before 2026-11-23T10:10:00Z");

        assertThat(guard.admit("g", "n6", T0.plus(Duration.ofMinutes(10))).allowed()).isTrue();
    }

    @Test
    void aNewLeaderThatFindsAStormRecordedWaitsAFullCooldown() {
        group("g", StormLimits.DEFAULTS, SIX, Set.of("n6"), Set.of(), true);

        assertThat(guard.decide("g", "n6", T0).limit()).isEqualTo(StormLimit.COOLDOWN);
        assertThat(guard.decide("g", "n6", T0.plus(Duration.ofMinutes(9))).limit()).isEqualTo(StormLimit.COOLDOWN);
        assertThat(guard.admit("g", "n6", T0.plus(Duration.ofMinutes(10))).allowed()).isTrue();
    }

    @Test
    void anAdmittedNodeThatIsHealthyAgainNoLongerCounts() {
        group("g", StormLimits.DEFAULTS, SIX, Set.of("n5", "n6"), Set.of(), false);
        assertThat(guard.admit("g", "n5", T0).allowed()).isTrue();

        group("g", StormLimits.DEFAULTS, SIX, Set.of("n6"), Set.of(), false);
        assertThat(guard.admit("g", "n6", T0.plusSeconds(10)).allowed()).isTrue();
        assertThat(guard.inProgress("g")).containsExactly("n6");
    }

    @Test
    void aGroupTheCensusDoesNotKnowIsRefused() {
        StormGuard.Decision d = guard.decide("ghost", "n1", T0);
        assertThat(d.limit()).isEqualTo(StormLimit.UNKNOWN_GROUP);
        assertThat(d.admission().allowed()).isFalse();
    }

    @Test
    void assessingAGroupSaysAStormHoldsBeforeAnyNodeIsACandidateAndStartsTheCooldown() {
        group("g", StormLimits.DEFAULTS, SIX, Set.of("n4", "n5", "n6"), Set.of(), false);
        assertThat(guard.assess("g", T0)).get().extracting(StormGuard.Decision::limit)
                .isEqualTo(StormLimit.MIN_HEALTHY);

        group("g", StormLimits.DEFAULTS, SIX, Set.of(), Set.of(), false);
        assertThat(guard.assess("g", T0.plusSeconds(60))).get().extracting(StormGuard.Decision::limit)
                .isEqualTo(StormLimit.COOLDOWN);
        assertThat(guard.assess("g", T0.plus(Duration.ofMinutes(10)))).get()
                .extracting(StormGuard.Decision::allowed).isEqualTo(true);
        assertThat(guard.assess("ghost", T0)).isEmpty();
    }
}
