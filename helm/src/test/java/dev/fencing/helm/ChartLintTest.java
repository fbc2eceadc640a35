package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.LintResult;
import org.junit.jupiter.api.Test;

class ChartLintTest {

    @Test
    void strictLintOfTheDefaultValuesHasNoErrorsOrWarnings() {
        LintResult result = FencingChart.lint();

        assertThat(result.isFailed()).as("helm lint --strict failed: %s", result.getMessages()).isFalse();
        assertThat(result.getMessages()).noneMatch(m -> m.contains("[ERROR]") || m.contains("[WARNING]"));
    }
}
