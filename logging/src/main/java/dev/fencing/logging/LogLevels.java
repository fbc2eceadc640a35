package dev.fencing.logging;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Log levels from {@code --log-level}: a root level and per-logger levels.
 *
 * <p>Each spec is either a level ({@code error|warn|info|debug|trace}, the root level) or {@code logger=level}
 * ({@code dev.fencing.memberlist=debug}); the last root level given wins.
 *
 * @param root    level of every logger without its own
 * @param loggers level per logger name (a name covers its children, as in logback)
 */
public record LogLevels(String root, Map<String, String> loggers) {

    /** The levels {@code --log-level} accepts, quietest first. */
    public static final List<String> NAMES = List.of("error", "warn", "info", "debug", "trace");
    /** {@code info} everywhere. */
    public static final LogLevels INFO = new LogLevels("info", Map.of());

    private static final Pattern LOGGER_NAME = Pattern.compile("[A-Za-z_$][\\w$]*(\\.[A-Za-z_$][\\w$]*)*");

    /** Validates and normalises the level names to lower case. */
    public LogLevels {
        root = level(root, "--log-level " + root);
        Map<String, String> copy = new LinkedHashMap<>();
        loggers.forEach((name, level) -> copy.put(name, level(level, "--log-level " + name + "=" + level)));
        loggers = Map.copyOf(copy);
    }

    /**
     * Parses {@code --log-level} values.
     *
     * @param specs the flag's values, in order; empty: {@code info}
     * @throws IllegalArgumentException naming the bad value and what is expected
     */
    public static LogLevels parse(List<String> specs) {
        String root = "info";
        Map<String, String> loggers = new LinkedHashMap<>();
        for (String spec : specs) {
            String s = spec.strip();
            int eq = s.indexOf('=');
            if (eq < 0) {
                root = level(s, "--log-level " + spec);
                continue;
            }
            String name = s.substring(0, eq).strip();
            if (!LOGGER_NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("--log-level " + spec
                        + ": expected a logger name before '=' (e.g. dev.fencing.memberlist=debug)");
            }
            loggers.put(name, level(s.substring(eq + 1), "--log-level " + spec));
        }
        return new LogLevels(root, loggers);
    }

    private static String level(String value, String what) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        if (!NAMES.contains(v)) {
            throw new IllegalArgumentException(what + ": expected one of " + String.join("|", NAMES)
                    + " or logger=level");
        }
        return v;
    }
}
