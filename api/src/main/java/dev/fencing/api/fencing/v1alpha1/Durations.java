package dev.fencing.api.fencing.v1alpha1;

import dev.fencing.policy.DurationFormat;
import java.time.Duration;

/** The duration strings of the fencing CRDs: a whole number and one unit, {@code s}, {@code m} or {@code h}. */
public final class Durations {

    /** Schema pattern of a duration field. */
    public static final String PATTERN = "^[0-9]{1,6}(s|m|h)$";

    private static final java.util.regex.Pattern COMPILED = java.util.regex.Pattern.compile(PATTERN);

    private Durations() {
    }

    /**
     * Parses {@code value}, or returns {@code fallback} when it is null.
     *
     * @throws IllegalArgumentException naming {@code field} when the value does not match {@link #PATTERN}
     */
    public static Duration parse(String field, String value, Duration fallback) {
        if (value == null) {
            return fallback;
        }
        if (!COMPILED.matcher(value).matches()) {
            throw new IllegalArgumentException(field + ": '" + value + "' is not a duration such as 30s, 5m or 1h");
        }
        // The schema's narrower pattern is checked above; the arithmetic is the project's one duration parser.
        return DurationFormat.parse(value);
    }
}
