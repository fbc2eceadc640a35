package dev.fencing.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DurationFormatTest {

    @Test
    void parsesKubernetesStyleDurations() {
        assertThat(DurationFormat.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(DurationFormat.parse("2s")).isEqualTo(Duration.ofSeconds(2));
        assertThat(DurationFormat.parse("1m30s")).isEqualTo(Duration.ofSeconds(90));
        assertThat(DurationFormat.parse("60s")).isEqualTo(Duration.ofMinutes(1));
        assertThat(DurationFormat.parse("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(DurationFormat.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(DurationFormat.parse("250us")).isEqualTo(Duration.ofNanos(250_000));
        assertThat(DurationFormat.parse("7ns")).isEqualTo(Duration.ofNanos(7));
        assertThat(DurationFormat.parse("0")).isEqualTo(Duration.ZERO);
        assertThat(DurationFormat.parse("1h2m3s4ms")).isEqualTo(Duration.ofMillis(3_723_004));
    }

    @ParameterizedTest
    @ValueSource(strings = {"5", "-1s", "1 s", "1d", "s", "1.s", "1m 30s", "+2s", "1S"})
    void rejectsMalformedDurationsWithExamples(String text) {
        assertThatThrownBy(() -> DurationFormat.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("duration '" + text + "' is not valid; write numbers with units ns, us, ms, s, m or h "
                        + "and no sign or spaces, e.g. 500ms, 2s, 1m30s, 1h");
    }

    @Test
    void rejectsEmptyAndNull() {
        assertThatThrownBy(() -> DurationFormat.parse("")).hasMessageContaining("duration is empty");
        assertThatThrownBy(() -> DurationFormat.parse(null)).hasMessageContaining("duration is empty");
    }

    @Test
    void rejectsDurationsBeyondLongNanos() {
        assertThatThrownBy(() -> DurationFormat.parse("9999999h")).hasMessageContaining("too large");
    }

    @Test
    void wholeUnitTimeoutsFollowTheDeckhousePattern() {
        assertThat(DurationFormat.parseWholeUnit("60s")).isEqualTo(Duration.ofSeconds(60));
        assertThat(DurationFormat.parseWholeUnit("5m")).isEqualTo(Duration.ofMinutes(5));
        assertThatThrownBy(() -> DurationFormat.parseWholeUnit("1m30s"))
                .hasMessage("timeout '1m30s' is not valid; write a whole number of seconds, minutes or hours, "
                        + "e.g. 60s, 5m, 1h");
        assertThatThrownBy(() -> DurationFormat.parseWholeUnit("500ms")).hasMessageContaining("whole number");
    }

    @Test
    void formatsInTheShortestForm() {
        assertThat(DurationFormat.format(Duration.ZERO)).isEqualTo("0s");
        assertThat(DurationFormat.format(Duration.ofMillis(500))).isEqualTo("500ms");
        assertThat(DurationFormat.format(Duration.ofSeconds(2))).isEqualTo("2s");
        assertThat(DurationFormat.format(Duration.ofSeconds(90))).isEqualTo("1m30s");
        assertThat(DurationFormat.format(Duration.ofSeconds(60))).isEqualTo("1m");
        assertThat(DurationFormat.format(Duration.ofHours(1))).isEqualTo("1h");
        assertThat(DurationFormat.format(Duration.ofMillis(1500))).isEqualTo("1.5s");
        assertThat(DurationFormat.format(Duration.ofNanos(1_500_000))).isEqualTo("1500us");
        assertThat(DurationFormat.format(Duration.ofMillis(3_600_500))).isEqualTo("1h0.5s");
    }

    @Test
    void refusesToFormatNegativeDurations() {
        assertThatThrownBy(() -> DurationFormat.format(Duration.ofSeconds(-1))).hasMessageContaining("negative");
    }

    @Test
    void patternConstantAcceptsWhatParseAccepts() {
        assertThat("1m30s").matches(DurationFormat.PATTERN);
        assertThat("0").matches(DurationFormat.PATTERN);
        assertThat("1d").doesNotMatch(DurationFormat.PATTERN);
        assertThat("60s").matches(DurationFormat.WHOLE_UNIT_PATTERN);
        assertThat("1m30s").doesNotMatch(DurationFormat.WHOLE_UNIT_PATTERN);
    }

    @Property(tries = 300, seed = "20261122")
    void formatThenParseIsIdentity(@ForAll @LongRange(min = 0, max = 400L * 3_600_000_000_000L) long nanos) {
        Duration d = Duration.ofNanos(nanos);
        String text = DurationFormat.format(d);
        assertThat(text).matches(DurationFormat.PATTERN);
        assertThat(DurationFormat.parse(text)).isEqualTo(d);
    }
}
