package dev.fencing.e2e.process;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One JSON object a child process printed, with when this JVM read it.
 *
 * @param receivedAtMillis wall-clock time of reading the line (epoch ms), comparable with the child's {@code ts}
 * @param receivedNanos    {@link System#nanoTime()} when the line was read, for durations measured in this JVM
 * @param json             the parsed object
 */
public record ObservedLine(long receivedAtMillis, long receivedNanos, JsonNode json) {

    /** @return the text field {@code name}, or "" when absent */
    public String text(String name) {
        JsonNode value = json.get(name);
        return value == null || value.isNull() ? "" : value.asText();
    }
}
