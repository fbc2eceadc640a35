package dev.fencing.logging;

import java.util.Locale;

/** The shape of a log line ({@code --log-format}). */
public enum LogFormat {
    /** {@code 2026-01-02T03:04:05.678Z INFO  [thread] logger node=n1 group=g1 - message}. */
    TEXT,
    /** One JSON object per line: {@code ts}, {@code level}, {@code thread}, {@code logger}, the fields, {@code msg}. */
    JSON;

    /**
     * Parses {@code text} or {@code json}.
     *
     * @throws IllegalArgumentException naming the flag and what is expected
     */
    public static LogFormat parse(String value) {
        return switch (value.strip().toLowerCase(Locale.ROOT)) {
            case "text" -> TEXT;
            case "json" -> JSON;
            default -> throw new IllegalArgumentException("--log-format " + value + ": expected text or json");
        };
    }
}
