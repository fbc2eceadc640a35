package dev.fencing.e2e.netns;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LabRunsTest {

    @Test
    void runIdIsTheSecondDashSeparatedPartOfALabNamespace() {
        assertThat(LabRuns.runIdOf("fe2e-ab12cd-br")).isEqualTo("ab12cd");
        assertThat(LabRuns.runIdOf("fe2e-ab12cd-3")).isEqualTo("ab12cd");
    }

    @Test
    void aRunWithoutALiveOwnerIsNotAlive() {
        assertThat(LabRuns.ownerAlive("no-such-run-" + System.nanoTime())).isFalse();
    }

    @Test
    void startTimeIdentifiesTheCurrentProcess() {
        long pid = ProcessHandle.current().pid();
        assertThat(LabRuns.startTime(pid)).isPresent().get().asString().matches("[0-9]+");
        assertThat(LabRuns.startTime(Long.MAX_VALUE)).isEmpty();
    }
}
