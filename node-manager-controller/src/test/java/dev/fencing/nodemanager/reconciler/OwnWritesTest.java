package dev.fencing.nodemanager.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class OwnWritesTest {

    private static final Instant T0 = Instant.parse("2026-11-28T10:00:00Z");
    private static final String KEY = "node-manager.deckhouse.io/fencing-gossip-addresses";
    private final OwnWrites writes = new OwnWrites(Duration.ofSeconds(5));

    @Test
    void withoutAWriteTheCacheIsTheTruth() {
        assertThat(writes.current("a", KEY, Optional.of("x"), T0)).contains("x");
        assertThat(writes.current("a", KEY, Optional.empty(), T0)).isEmpty();
    }

    @Test
    void ourWriteOverridesALaggingCacheUntilTheCacheShowsIt() {
        writes.wrote("a", KEY, Optional.of("new"), T0);
        assertThat(writes.current("a", KEY, Optional.of("old"), T0.plusSeconds(1))).contains("new");
        assertThat(writes.current("b", KEY, Optional.of("other"), T0.plusSeconds(1))).contains("other");
        assertThat(writes.current("a", KEY, Optional.of("new"), T0.plusSeconds(2))).contains("new");
        // Caught up: a later change by someone else is seen at once.
        assertThat(writes.current("a", KEY, Optional.of("theirs"), T0.plusSeconds(3))).contains("theirs");
        assertThat(writes.size()).isZero();
    }

    @Test
    void aRemovalIsRememberedLikeAValue() {
        writes.wrote("a", KEY, Optional.empty(), T0);
        assertThat(writes.current("a", KEY, Optional.of("old"), T0.plusSeconds(1))).isEmpty();
        assertThat(writes.current("a", KEY, Optional.empty(), T0.plusSeconds(2))).isEmpty();
        assertThat(writes.current("a", KEY, Optional.of("theirs"), T0.plusSeconds(3))).contains("theirs");
    }

    @Test
    void aWriteTheCacheNeverShowsStopsCountingAfterTheTrustInterval() {
        // Another writer (or a mutating webhook) changed it before our watch event came: after the interval the
        // cached value is acted on, so the caller writes ours again instead of believing it is there for good.
        writes.wrote("a", KEY, Optional.of("ours"), T0);
        assertThat(writes.current("a", KEY, Optional.of("theirs"), T0.plusMillis(4999))).contains("ours");
        assertThat(writes.current("a", KEY, Optional.of("theirs"), T0.plusSeconds(5))).contains("theirs");
        assertThat(writes.size()).isZero();
    }

    @Test
    void aZeroIntervalAlwaysBelievesTheCache() {
        OwnWrites none = new OwnWrites(Duration.ZERO);
        none.wrote("a", KEY, Optional.of("ours"), T0);
        assertThat(none.current("a", KEY, Optional.of("old"), T0)).contains("old");
    }

    @Test
    void entriesOfNodesNeverSeenAgainArePrunedOnceExpired() {
        for (int i = 0; i <= 4096; i++) {
            writes.wrote("gone-" + i, KEY, Optional.of("v"), T0);
        }
        writes.wrote("fresh", KEY, Optional.of("v"), T0.plusSeconds(6));
        assertThat(writes.size()).isEqualTo(1);
        assertThat(writes.current("fresh", KEY, Optional.of("old"), T0.plusSeconds(7))).contains("v");
    }

    @Test
    void aViewOfAllOfANodesLabelsOverlaysTheWritesTheCacheDoesNotShowYet() {
        writes.wrote("a", "armed", Optional.of("true"), T0);
        writes.wrote("a", "mode", Optional.empty(), T0);
        assertThat(writes.view("a", Map.of("mode", "Watchdog", "zone", "z1"), T0.plusSeconds(1)))
                .isEqualTo(Map.of("armed", "true", "zone", "z1"));
        assertThat(writes.view("b", null, T0.plusSeconds(1))).isEmpty();
        // The cache caught up with one write; the other is forgotten after the interval.
        assertThat(writes.view("a", Map.of("armed", "true", "mode", "Watchdog"), T0.plusSeconds(5)))
                .isEqualTo(Map.of("armed", "true", "mode", "Watchdog"));
        assertThat(writes.size()).isZero();
    }

    @Test
    void aNegativeIntervalIsRefused() {
        assertThatThrownBy(() -> new OwnWrites(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
    }
}
