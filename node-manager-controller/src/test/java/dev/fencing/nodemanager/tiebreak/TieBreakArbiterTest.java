package dev.fencing.nodemanager.tiebreak;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class TieBreakArbiterTest {

    private static final Set<String> EXPECTED = Set.of("a", "b", "c", "d");
    private static final Set<String> LEFT = Set.of("a", "b");
    private static final Set<String> RIGHT = Set.of("c", "d");
    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration MAX = Duration.ofSeconds(10);
    private static final Duration SLACK = Duration.ofSeconds(15);

    private final AtomicLong now = new AtomicLong(1_000_000_000L);

    private TieBreakArbiter leaderPastWaitOut() {
        TieBreakArbiter arbiter = new TieBreakArbiter(now::get, MAX, SLACK);
        arbiter.startedLeading();
        advance(MAX.plus(SLACK));
        return arbiter;
    }

    private void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }

    @Test
    void aLeaderWhoseLeaseRenewalIsOlderThanTheRenewDeadlineGrantsNothingUntilItRenewsAgain() {
        Duration renewDeadline = Duration.ofSeconds(10);
        TieBreakArbiter arbiter = new TieBreakArbiter(now::get, MAX, SLACK, renewDeadline);
        arbiter.startedLeading();
        advance(MAX.plus(SLACK));
        TieBreakDecision unseen = arbiter.decide("g", "a", LEFT, EXPECTED, LEASE);
        assertThat(unseen.granted()).isFalse();
        assertThat(unseen.reason()).isEqualTo("leader Lease renewal not seen yet");

        arbiter.leaseRenewed(now.get());
        assertThat(arbiter.decide("g", "a", LEFT, EXPECTED, LEASE).granted()).isTrue();
        // Paused (SIGSTOP) past the deadline: JOSDK still believes it leads, the arbiter does not.
        advance(renewDeadline.plusNanos(1));
        TieBreakDecision stale = arbiter.decide("g", "a", LEFT, EXPECTED, LEASE);
        assertThat(stale.granted()).isFalse();
        assertThat(stale.reason()).isEqualTo("leader Lease last renewed 10000ms ago, beyond the renew deadline"
                + " 10000ms: this replica may no longer lead");
        // A renewal event sent before the pause but delivered after it changes nothing.
        arbiter.leaseRenewed(now.get() - renewDeadline.toNanos() - 1);
        assertThat(arbiter.decide("g", "a", LEFT, EXPECTED, LEASE).granted()).isFalse();

        arbiter.leaseRenewed(now.get());
        assertThat(arbiter.decide("g", "a", LEFT, EXPECTED, LEASE).granted()).isTrue();
    }

    @Test
    void aNewLeaderSaysHowLongItStillWaitsOutItsPredecessorsGrants() {
        TieBreakArbiter arbiter = new TieBreakArbiter(now::get, MAX, SLACK);
        assertThat(arbiter.grantsWaitFor()).as("not leading: nobody waits for it").isEmpty();
        arbiter.startedLeading();
        assertThat(arbiter.grantsWaitFor()).contains(MAX.plus(SLACK));
        advance(MAX);
        assertThat(arbiter.grantsWaitFor()).contains(SLACK);
        advance(SLACK);
        assertThat(arbiter.grantsWaitFor()).isEmpty();
    }

    @Test
    void losingLeadershipForgetsTheRenewal() {
        TieBreakArbiter arbiter = new TieBreakArbiter(now::get, MAX, SLACK, Duration.ofSeconds(10));
        arbiter.startedLeading();
        arbiter.leaseRenewed(now.get());
        arbiter.stoppedLeading();
        arbiter.startedLeading();
        advance(MAX.plus(SLACK));
        assertThat(arbiter.decide("g", "a", LEFT, EXPECTED, LEASE).reason())
                .isEqualTo("leader Lease renewal not seen yet");
    }

    @Test
    void twoSidesAskingConcurrentlyGetExactlyOneGrant() throws Exception {
        for (int round = 0; round < 50; round++) {
            TieBreakArbiter arbiter = leaderPastWaitOut();
            ExecutorService pool = Executors.newFixedThreadPool(4);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<TieBreakDecision>> answers = new ArrayList<>();
            for (String node : List.of("a", "b", "c", "d")) {
                Set<String> side = LEFT.contains(node) ? LEFT : RIGHT;
                answers.add(pool.submit(() -> {
                    go.await();
                    return arbiter.decide("g", node, side, EXPECTED, LEASE);
                }));
            }
            go.countDown();
            List<Boolean> leftGrants = new ArrayList<>();
            List<Boolean> rightGrants = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                boolean granted = answers.get(i).get(5, TimeUnit.SECONDS).granted();
                (i < 2 ? leftGrants : rightGrants).add(granted);
            }
            pool.shutdown();
            boolean left = leftGrants.contains(true);
            boolean right = rightGrants.contains(true);
            assertThat(left ^ right).as("round %d: exactly one side granted", round).isTrue();
            assertThat(left ? leftGrants : rightGrants).containsOnly(true);
        }
    }

    @Test
    void theHolderRenewsWhileTheOtherSideIsRefusedNamingTheHolderUntilTheLeaseLapses() {
        TieBreakArbiter arbiter = leaderPastWaitOut();
        assertThat(arbiter.decide("g", "a", LEFT, EXPECTED, LEASE).granted()).isTrue();
        advance(Duration.ofSeconds(2));
        TieBreakDecision other = arbiter.decide("g", "c", RIGHT, EXPECTED, LEASE);
        assertThat(other.granted()).isFalse();
        assertThat(other.reason()).isEqualTo(TieBreakArbiter.HELD_BY_OTHER_SIDE_PREFIX + "a");
        TieBreakDecision renewed = arbiter.decide("g", "b", LEFT, EXPECTED, LEASE);
        assertThat(renewed.granted()).isTrue();
        assertThat(renewed.reason()).isEqualTo("renewed");
        advance(Duration.ofMillis(2_999));
        assertThat(arbiter.decide("g", "c", RIGHT, EXPECTED, LEASE).granted()).isFalse();
        advance(Duration.ofMillis(2));
        assertThat(arbiter.decide("g", "c", RIGHT, EXPECTED, LEASE).granted()).isTrue();
    }

    @Test
    void eachTieNewlyGrantedCountsOnceAndRenewalsAndRefusalsDoNot() {
        TieBreakArbiter arbiter = leaderPastWaitOut();
        assertThat(arbiter.newGrants("g")).isZero();
        assertThat(arbiter.decide("g", "a", LEFT, EXPECTED, LEASE).granted()).isTrue();
        assertThat(arbiter.newGrants("g")).isEqualTo(1);
        advance(Duration.ofSeconds(2));
        assertThat(arbiter.decide("g", "b", LEFT, EXPECTED, LEASE).reason()).isEqualTo("renewed");
        assertThat(arbiter.decide("g", "c", RIGHT, EXPECTED, LEASE).granted()).isFalse();
        assertThat(arbiter.decide("g", "a", Set.of("a"), EXPECTED, LEASE).granted()).isFalse();
        assertThat(arbiter.newGrants("g")).as("a renewal and refusals").isEqualTo(1);
        assertThat(arbiter.newGrants("other")).isZero();
        // The lease lapses: the next grant breaks a new tie, and a new leadership term does not reset the count.
        advance(LEASE);
        assertThat(arbiter.decide("g", "c", RIGHT, EXPECTED, LEASE).reason()).isEqualTo("granted");
        assertThat(arbiter.newGrants("g")).isEqualTo(2);
        arbiter.stoppedLeading();
        arbiter.startedLeading();
        assertThat(arbiter.newGrants("g")).isEqualTo(2);
    }

    @Test
    void anOverlappingSideCannotHandTheTieAcrossToTheOtherHalf() {
        TieBreakArbiter arbiter = leaderPastWaitOut();
        assertThat(arbiter.decide("g", "c", RIGHT, EXPECTED, LEASE).granted()).isTrue();
        // A mixed side (asked while old round trips across the cut were still fresh) overlaps RIGHT: granted...
        assertThat(arbiter.decide("g", "a", Set.of("a", "c"), EXPECTED, LEASE).granted()).isTrue();
        // ...but LEFT is disjoint from RIGHT, whose lease is still valid: refused, naming RIGHT's holder.
        TieBreakDecision left = arbiter.decide("g", "a", LEFT, EXPECTED, LEASE);
        assertThat(left.granted()).isFalse();
        assertThat(left.reason()).isEqualTo(TieBreakArbiter.HELD_BY_OTHER_SIDE_PREFIX + "c");
        advance(LEASE);
        assertThat(arbiter.decide("g", "a", LEFT, EXPECTED, LEASE).granted()).isTrue();
    }

    @Test
    void aNonLeaderNeverGrants() {
        TieBreakArbiter arbiter = new TieBreakArbiter(now::get, MAX, SLACK);
        TieBreakDecision d = arbiter.decide("g", "a", LEFT, EXPECTED, LEASE);
        assertThat(d.granted()).isFalse();
        assertThat(d.reason()).isEqualTo("not leader");
    }

    @Test
    void aSideThatIsNotExactlyHalfOfTheExpectedMembersIsRefused() {
        TieBreakArbiter arbiter = leaderPastWaitOut();
        assertThat(arbiter.decide("g", "a", Set.of("a"), EXPECTED, LEASE).granted()).isFalse();
        assertThat(arbiter.decide("g", "a", Set.of("a", "x"), EXPECTED, LEASE).granted()).isFalse();
        assertThat(arbiter.decide("g", "c", LEFT, EXPECTED, LEASE).reason()).contains("requesting node");
    }

    @Test
    void leasesAreCappedAtTheMaximum() {
        TieBreakArbiter arbiter = leaderPastWaitOut();
        assertThat(arbiter.decide("g", "a", LEFT, EXPECTED, Duration.ofMinutes(5)).validFor()).isEqualTo(MAX);
    }

    @Test
    void grantsFromSuccessiveLeadersNeverOverlap() {
        // Two replicas on one fake clock; the old leader granted LEFT just before it lost leadership.
        TieBreakArbiter first = leaderPastWaitOut();
        TieBreakArbiter second = new TieBreakArbiter(now::get, MAX, SLACK);
        TieBreakDecision old = first.decide("g", "a", LEFT, EXPECTED, MAX);
        assertThat(old.granted()).isTrue();
        long oldExpiry = now.get() + old.validFor().toNanos();

        // The old leader may keep acting for up to SLACK without knowing it was deposed.
        advance(Duration.ofSeconds(1));
        second.startedLeading();
        long lastRightGrantStart = Long.MAX_VALUE;
        for (int step = 0; step < 400; step++) {
            TieBreakDecision d = second.decide("g", "c", RIGHT, EXPECTED, LEASE);
            if (d.granted()) {
                lastRightGrantStart = Math.min(lastRightGrantStart, now.get());
            }
            advance(Duration.ofMillis(100));
        }
        first.stoppedLeading();
        assertThat(lastRightGrantStart).as("the new leader granted the other side at some point")
                .isLessThan(Long.MAX_VALUE);
        assertThat(lastRightGrantStart).as("and only after every grant it could not see had expired")
                .isGreaterThanOrEqualTo(oldExpiry);
    }

    @Test
    void aDeposedLeaderStopsGranting() {
        TieBreakArbiter arbiter = leaderPastWaitOut();
        arbiter.stoppedLeading();
        assertThat(arbiter.decide("g", "a", LEFT, EXPECTED, LEASE).reason()).isEqualTo("not leader");
    }
}
