package dev.fencing.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MinHealthyTest {

    @Test
    void parsesPercentagesAndCounts() {
        assertThat(MinHealthy.parse("50%")).isEqualTo(new MinHealthy(50, true));
        assertThat(MinHealthy.parse(3)).isEqualTo(new MinHealthy(3, false));
        assertThat(MinHealthy.parse("3")).isEqualTo(new MinHealthy(3, false));
        assertThat(MinHealthy.parse("0%").toString()).isEqualTo("0%");
    }

    @Test
    void refusesWhatIsNeitherWithAMessageSayingWhatToWrite() {
        assertThatThrownBy(() -> MinHealthy.parse("half")).hasMessageContaining("\"50%\"");
        assertThatThrownBy(() -> MinHealthy.parse("150%")).hasMessageContaining("out of range");
        assertThatThrownBy(() -> MinHealthy.parse(-1)).hasMessageContaining("not valid");
        assertThatThrownBy(() -> MinHealthy.parse(1.5)).hasMessageContaining("not valid");
    }

    @Test
    void halfOfTheGroupHealthyIsNotEnough() {
        MinHealthy half = MinHealthy.DEFAULT;
        assertThat(half.exceededBy(3, 6)).isFalse();
        assertThat(half.exceededBy(4, 6)).isTrue();
        assertThat(half.exceededBy(2, 3)).isTrue();
        assertThat(half.exceededBy(1, 2)).isFalse();
        assertThat(new MinHealthy(3, false).exceededBy(3, 10)).isFalse();
        assertThat(new MinHealthy(3, false).exceededBy(4, 10)).isTrue();
        assertThat(new MinHealthy(0, true).exceededBy(1, 10)).isTrue();
    }
}
