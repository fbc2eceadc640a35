package dev.fencing.policy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kubernetes-style (Go {@code time.ParseDuration}) durations: a sequence of decimal numbers, each with a unit, such
 * as {@code "500ms"}, {@code "2s"}, {@code "1m30s"}, {@code "1.5h"}; units {@code ns}, {@code us}, {@code ms},
 * {@code s}, {@code m}, {@code h}; {@code "0"} alone is zero. Signs are not accepted: no timing is negative.
 */
public final class DurationFormat {

    /** The CRD schema pattern of a duration string; the same language {@link #parse} accepts. */
    public static final String PATTERN = "^(0|([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+)$";

    /** The CRD schema pattern of a whole-seconds/minutes/hours timeout, as Deckhouse's {@code watchdog.timeout}. */
    public static final String WHOLE_UNIT_PATTERN = "^[0-9]+[smh]$";

    private static final Pattern WHOLE = Pattern.compile(PATTERN);
    private static final Pattern PART = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(ns|us|ms|s|m|h)");
    private static final BigInteger MAX_NANOS = BigInteger.valueOf(Long.MAX_VALUE);

    private DurationFormat() {
    }

    /**
     * Parses a duration string.
     *
     * @throws IllegalArgumentException saying what is wrong and showing valid examples
     */
    public static Duration parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("duration is empty; write a number with a unit, e.g. 500ms, 2s, 1m30s");
        }
        if (!WHOLE.matcher(text).matches()) {
            throw new IllegalArgumentException("duration '" + text + "' is not valid; write numbers with units "
                    + "ns, us, ms, s, m or h and no sign or spaces, e.g. 500ms, 2s, 1m30s, 1h");
        }
        if (text.equals("0")) {
            return Duration.ZERO;
        }
        BigDecimal nanos = BigDecimal.ZERO;
        Matcher part = PART.matcher(text);
        while (part.find()) {
            nanos = nanos.add(new BigDecimal(part.group(1)).multiply(BigDecimal.valueOf(nanosPerUnit(part.group(2)))));
        }
        BigInteger whole = nanos.toBigInteger();
        if (whole.compareTo(MAX_NANOS) > 0) {
            throw new IllegalArgumentException("duration '" + text + "' is too large; use at most 2562047h");
        }
        return Duration.ofNanos(whole.longValueExact());
    }

    /**
     * Parses a whole-unit timeout such as {@code "60s"}, {@code "5m"}, {@code "1h"} (pattern
     * {@link #WHOLE_UNIT_PATTERN}).
     *
     * @throws IllegalArgumentException saying what is wrong and showing valid examples
     */
    public static Duration parseWholeUnit(String text) {
        if (text == null || !text.matches(WHOLE_UNIT_PATTERN)) {
            throw new IllegalArgumentException("timeout '" + text + "' is not valid; write a whole number of seconds, "
                    + "minutes or hours, e.g. 60s, 5m, 1h");
        }
        return parse(text);
    }

    /**
     * Formats a duration in the shortest form {@link #parse} reads back exactly: {@code "500ms"}, {@code "2s"},
     * {@code "1m30s"}, {@code "1.5s"}, {@code "1h"}, {@code "0s"}.
     *
     * @throws IllegalArgumentException for a negative duration
     */
    public static String format(Duration duration) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException("cannot format negative duration " + duration);
        }
        if (duration.isZero()) {
            return "0s";
        }
        if (duration.compareTo(Duration.ofSeconds(1)) < 0) {
            long nanos = duration.toNanos();
            if (nanos % 1_000_000 == 0) {
                return (nanos / 1_000_000) + "ms";
            }
            if (nanos % 1_000 == 0) {
                return (nanos / 1_000) + "us";
            }
            return nanos + "ns";
        }
        StringBuilder out = new StringBuilder();
        long hours = duration.toHours();
        long minutes = duration.toMinutesPart();
        if (hours > 0) {
            out.append(hours).append('h');
        }
        if (minutes > 0) {
            out.append(minutes).append('m');
        }
        long seconds = duration.toSecondsPart();
        int nanos = duration.toNanosPart();
        if (seconds > 0 || nanos > 0) {
            out.append(seconds);
            if (nanos > 0) {
                out.append('.').append(String.format("%09d", nanos).replaceAll("0+$", ""));
            }
            out.append('s');
        }
        return out.toString();
    }

    private static long nanosPerUnit(String unit) {
        return switch (unit) {
            case "ns" -> 1L;
            case "us" -> 1_000L;
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m" -> 60_000_000_000L;
            case "h" -> 3_600_000_000_000L;
            default -> throw new IllegalStateException("unit " + unit + " passed the pattern but has no factor");
        };
    }
}
