package dev.fencing.e2e.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ControllerOptionsTest {

    @Test
    void defaultsAddNoFlagsAndNoChartValues() {
        assertThat(ControllerOptions.defaults().args()).isEmpty();
        assertThat(ControllerOptions.defaults().chartValues()).isEmpty();
    }

    @Test
    void powerFencingTurnsTheEscalationOnWithTheHostsFenceAgentsAndAppendsTheExtraFlags() {
        ControllerOptions options = ControllerOptions.withPowerFencing("--power-fencing-interval", "500ms");

        assertThat(options.args()).containsExactly("--power-fencing", "--fence-agents-dir", "/usr/sbin",
                "--kdump-port", "-1", "--power-fencing-interval", "500ms");
        assertThat(options.chartValues()).isEqualTo(Map.of("controller.powerFencing.enabled", "true"));
    }

    @Test
    void extraFlagsWithoutPowerFencingArePassedAsTheyAre() {
        assertThat(new ControllerOptions(false, List.of("--max-out-of-service", "2")).args())
                .containsExactly("--max-out-of-service", "2");
    }
}
