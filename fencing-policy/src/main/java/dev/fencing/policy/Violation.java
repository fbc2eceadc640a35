package dev.fencing.policy;

import java.util.Objects;

/**
 * One problem found in a fencing policy.
 *
 * @param field   the CRD path of the offending field, e.g. {@code spec.fencing.timings.feedInterval}
 * @param message what is wrong and what to change
 */
public record Violation(String field, String message) {

    /** Checks that both parts are present. */
    public Violation {
        Objects.requireNonNull(field, "field");
        Objects.requireNonNull(message, "message");
    }

    /** {@code field: message}, the form used in conditions and logs. */
    @Override
    public String toString() {
        return field + ": " + message;
    }
}
