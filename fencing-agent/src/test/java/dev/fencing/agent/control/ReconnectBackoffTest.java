package dev.fencing.agent.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ReconnectBackoffTest {

    private static final long SEED = 42;

    @Test
    void delaysDoubleWithinJitteredRangesUpToTheCapAndResetAfterSuccess() {
        ReconnectBackoff b = new ReconnectBackoff(Duration.ofMillis(100), Duration.ofMillis(1000),
                new SplittableRandom(SEED));
        long[] ceilings = {100, 200, 400, 800, 1000, 1000};
        for (long ceiling : ceilings) {
            long d = b.nextDelay().toMillis();
            assertThat(d).as("seed %d", SEED).isBetween(ceiling / 2, ceiling);
        }
        b.reset();
        assertThat(b.nextDelay().toMillis()).isBetween(50L, 100L);
    }

    @Test
    void jitterSpreadsAgentsThatFailedTogether() {
        long distinct = java.util.stream.LongStream.range(0, 50)
                .map(i -> new ReconnectBackoff(Duration.ofSeconds(1), Duration.ofSeconds(30),
                        new SplittableRandom(i)).nextDelay().toMillis())
                .distinct().count();
        assertThat(distinct).isGreaterThan(40);
    }

    @Test
    void rejectsAnEmptyOrInvertedRange() {
        assertThatThrownBy(() -> new ReconnectBackoff(Duration.ZERO, Duration.ofSeconds(1), new SplittableRandom()))
                .hasMessageContaining("0 < initial <= max");
        assertThatThrownBy(() -> new ReconnectBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1),
                new SplittableRandom())).hasMessageContaining("initial=PT2S");
    }
}
