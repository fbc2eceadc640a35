package dev.fencing.nodemanager.storm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.api.v1.NodeGroupStatus;
import io.fabric8.kubernetes.api.model.Condition;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class StormLimitConditionTest {

    private static final Instant NOW = Instant.parse("2026-11-23T10:00:00Z");
    private static final StormGuard.Decision STORM = new StormGuard.Decision(StormLimit.MIN_HEALTHY, "only 3 of 6");
    private static final StormGuard.Decision FULL = new StormGuard.Decision(StormLimit.MAX_CONCURRENT, "1 in progress");
    private static final StormGuard.Decision FINE = new StormGuard.Decision(null, "within");

    private static StormLimitCondition.Outcome apply(NodeGroupStatus previous, StormGuard.Decision assessed,
                                                     Map<String, StormGuard.Decision> refused) {
        return StormLimitCondition.apply(new NodeGroupStatus(), previous, "g", Optional.of(assessed), refused, 1,
                NOW);
    }

    private static Condition condition(StormLimitCondition.Outcome o) {
        return o.status().getConditions().stream().filter(c -> StormLimitCondition.TYPE.equals(c.getType()))
                .findFirst().orElseThrow();
    }

    @Test
    void aNewHoldIsAnnouncedOnceAndNamesTheWaitingNodes() {
        StormLimitCondition.Outcome first = apply(null, STORM, Map.of("n5", STORM, "n4", STORM));
        assertThat(condition(first).getStatus()).isEqualTo("True");
        assertThat(condition(first).getReason()).isEqualTo("MinHealthy");
        assertThat(condition(first).getMessage()).isEqualTo("only 3 of 6; waiting: n4, n5");
        assertThat(first.events()).singleElement().satisfies(e -> {
            assertThat(e.reason()).isEqualTo(StormLimitCondition.EVENT_REASON);
            assertThat(e.type()).isEqualTo("Warning");
            assertThat(e.onNode()).isFalse();
        });

        assertThat(apply(first.status(), STORM, Map.of()).events()).as("the same hold again").isEmpty();
        assertThat(apply(first.status(), FINE, Map.of("n6", FULL)).events()).as("another limit").hasSize(1);
    }

    @Test
    void withinTheLimitsTheConditionIsFalse() {
        StormLimitCondition.Outcome o = apply(null, FINE, Map.of());
        assertThat(condition(o).getStatus()).isEqualTo("False");
        assertThat(condition(o).getReason()).isEqualTo(StormLimitCondition.WITHIN_LIMITS);
        assertThat(o.events()).isEmpty();
        assertThat(StormLimitCondition.recordsStorm(o.status())).isFalse();
    }

    @Test
    void onlyTheLimitsAfterWhichTheCooldownRunsRecordAStorm() {
        assertThat(StormLimitCondition.recordsStorm(apply(null, STORM, Map.of()).status())).isTrue();
        assertThat(StormLimitCondition.recordsStorm(apply(null, FINE, Map.of("n6", FULL)).status())).isFalse();
    }
}
