package dev.fencing.nodemanager.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class RefusalLogTest {

    private final RefusalLog log = new RefusalLog();

    @Test
    void eachRefusalIsLoggedOnceWhileItLastsAndAgainWhenItReturns() {
        assertThat(log.toLog("workers", List.of("node=a address=10.0.0.1", "node=b address=10.0.0.2")))
                .containsExactly("node=a address=10.0.0.1", "node=b address=10.0.0.2");
        assertThat(log.toLog("workers", List.of("node=b address=10.0.0.2", "node=a address=10.0.0.1"))).isEmpty();
        assertThat(log.toLog("storage", List.of("node=a address=10.0.0.1")))
                .as("groups are apart").containsExactly("node=a address=10.0.0.1");

        assertThat(log.toLog("workers", List.of("node=b address=10.0.0.2"))).isEmpty();
        assertThat(log.toLog("workers", List.of("node=a address=10.0.0.1", "node=b address=10.0.0.2")))
                .as("a ended and came back").containsExactly("node=a address=10.0.0.1");
    }

    @Test
    void onlyTheLatestRefusalsAreRemembered() {
        for (int i = 0; i < 1_000; i++) {
            assertThat(log.toLog("workers", List.of("node=n" + i + " address=10.0.0." + (i % 250))))
                    .hasSize(1);
        }
        assertThat(log.remembered()).isEqualTo(1);
        assertThat(log.toLog("workers", List.of())).isEmpty();
        assertThat(log.remembered()).as("a group without refusals holds nothing").isZero();
    }
}
