package dev.fencing.api.v1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.fencing.policy.DurationFormat;
import dev.fencing.policy.PolicyResolver;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Objects;

/** {@code spec.fencing.watchdog}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class FencingWatchdog {

    @JsonPropertyDescription("Watchdog device timeout the agent sets and reads back, e.g. 60s (5s to 1h; "
            + "with profile Critical 2s to 1h). Default 60s.")
    @Pattern(DurationFormat.WHOLE_UNIT_PATTERN)
    // The pattern check guards duration(): without it a value the pattern refuses ('60') also fails here with
    // "type conversion error from 'string' to 'google.protobuf.Duration'" (seen on a real kube-apiserver).
    @ValidationRule(value = "!self.matches('" + DurationFormat.WHOLE_UNIT_PATTERN + "')"
            + " || (duration(self) >= duration('2s') && duration(self) <= duration('1h'))",
            message = PolicyResolver.WATCHDOG_TIMEOUT_RANGE_MESSAGE)
    private String timeout;

    /** An empty instance; Jackson fills it. */
    public FencingWatchdog() {
    }

    /** Watchdog device timeout the agent sets and reads back, e.g. */
    public String getTimeout() {
        return timeout;
    }

    /** Sets {@code timeout}. */
    public void setTimeout(String timeout) {
        this.timeout = timeout;
    }

    /** Sets {@code timeout} and returns this. */
    public FencingWatchdog withTimeout(String timeout) {
        this.timeout = timeout;
        return this;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof FencingWatchdog other)) {
            return false;
        }
        return Objects.equals(timeout, other.timeout);
    }

    @Override
    public int hashCode() {
        return Objects.hash(timeout);
    }

    @Override
    public String toString() {
        return "FencingWatchdog{timeout=" + timeout
                + "}";
    }
}
