package dev.fencing.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class AfterFenceTest {

    @Test
    void autoAfterFenceDeletesOnlyMachinesThePlatformRecreates() {
        assertThat(AfterFence.AUTO.effective(true)).isEqualTo(AfterFence.DELETE_NODE);
        assertThat(AfterFence.AUTO.effective(false)).isEqualTo(AfterFence.TAINT);
        assertThat(AfterFence.TAINT.effective(true)).isEqualTo(AfterFence.TAINT);
        assertThat(AfterFence.parse("DeleteNode")).isEqualTo(AfterFence.DELETE_NODE);
        assertThatThrownBy(() -> AfterFence.parse("deletenode")).hasMessageContaining("write 'DeleteNode'");
    }
}
