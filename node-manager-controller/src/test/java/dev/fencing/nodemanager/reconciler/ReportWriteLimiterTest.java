package dev.fencing.nodemanager.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.nodemanager.status.GroupEvent;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ReportWriteLimiterTest {

    private static final Instant T0 = Instant.parse("2026-11-23T10:00:00Z");
    private final ReportWriteLimiter limiter = new ReportWriteLimiter(
            new WriteLimits(Duration.ofSeconds(5), Duration.ofSeconds(60)));

    @Test
    void oneLabelPatchPerNodePerIntervalAndOtherNodesUnaffected() {
        assertThat(limiter.allowLabelPatch("a", T0)).isTrue();
        assertThat(limiter.allowLabelPatch("a", T0.plusSeconds(4))).isFalse();
        assertThat(limiter.allowLabelPatch("b", T0.plusSeconds(4))).isTrue();
        assertThat(limiter.allowLabelPatch("a", T0.plusSeconds(5))).isTrue();
        assertThat(limiter.limitedLabelPatches()).isEqualTo(1);
    }

    @Test
    void aRepeatedEventIsDroppedButAnotherReasonPasses() {
        GroupEvent armed = new GroupEvent(true, "a", "Normal", "Armed", "armed");
        assertThat(limiter.allowEvent(armed, T0)).isTrue();
        assertThat(limiter.allowEvent(armed, T0.plusSeconds(30))).isFalse();
        assertThat(limiter.allowEvent(new GroupEvent(true, "a", "Normal", "Disarmed", "x"), T0.plusSeconds(30)))
                .isTrue();
        assertThat(limiter.allowEvent(new GroupEvent(false, "a", "Normal", "Armed", "group a"), T0.plusSeconds(30)))
                .isTrue();
        assertThat(limiter.allowEvent(armed, T0.plusSeconds(60))).isTrue();
        assertThat(limiter.limitedEvents()).isEqualTo(1);
    }

    @Test
    void aFloodOfFlappingTransitionsCostsABoundedNumberOfWrites() {
        int writes = 0;
        // 1000 transitions, one every 100 ms, over 100 s: at most one patch per 5 s and one Event per reason a minute.
        for (int i = 0; i < 1000; i++) {
            Instant now = T0.plusMillis(100L * i);
            String reason = i % 2 == 0 ? "Armed" : "Disarmed";
            if (limiter.allowLabelPatch("a", now)) {
                writes++;
            }
            if (limiter.allowEvent(new GroupEvent(true, "a", "Normal", reason, reason), now)) {
                writes++;
            }
        }
        assertThat(writes).isEqualTo(20 + 4);
    }

    @Test
    void aMessageOnlyConditionPatchDoesNotHoldBackTheFlipThatFollowsIt() {
        // A reconcile that saw one voter's new report writes new counts; the next, with all of them, flips the vote.
        assertThat(limiter.allowConditionPatch("a", T0, false)).isTrue();
        assertThat(limiter.allowConditionPatch("a", T0, true)).isTrue();
        // Within the interval: neither another message-only change nor another flip.
        assertThat(limiter.allowConditionPatch("a", T0.plusSeconds(4), false)).isFalse();
        assertThat(limiter.allowConditionPatch("a", T0.plusSeconds(4), true)).isFalse();
        assertThat(limiter.allowConditionPatch("b", T0.plusSeconds(4), true)).isTrue();
        assertThat(limiter.allowConditionPatch("a", T0.plusSeconds(5), true)).isTrue();
        // New counts alone: once a minute (12 label intervals), since one agent's flap changes every node's.
        assertThat(limiter.allowConditionPatch("a", T0.plusSeconds(59), false)).isFalse();
        assertThat(limiter.allowConditionPatch("a", T0.plusSeconds(60), false)).isTrue();
        assertThat(limiter.limitedConditionPatches()).isEqualTo(3);
    }

    @Test
    void aFlappingVoteCostsOneFlipPerIntervalAndOneCountChangePerMinute() {
        int writes = 0;
        // 1000 changes, one every 100 ms over 100 s, alternating flips and new counts: 20 flips (one per 5 s) and
        // 2 count changes (one per minute).
        for (int i = 0; i < 1000; i++) {
            if (limiter.allowConditionPatch("a", T0.plusMillis(100L * i), i % 2 == 0)) {
                writes++;
            }
        }
        assertThat(writes).isEqualTo(20 + 2);
    }
}
