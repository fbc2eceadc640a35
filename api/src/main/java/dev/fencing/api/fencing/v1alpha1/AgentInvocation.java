package dev.fencing.api.fencing.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * One run of a fence agent.
 *
 * @param action     {@code status}, {@code off} or {@code on}
 * @param exitCode   the agent's exit code (for {@code status}: 0 on, 2 off, 1 error); absent when it timed out or
 *                   could not start
 * @param startedAt  when it started
 * @param finishedAt when it ended
 * @param output     the end of its output, secret values replaced by {@code ***}, at most 1024 characters
 * @param error      why it has no exit code (timeout, not found), or what was wrong with the method
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AgentInvocation(
        @JsonPropertyDescription("status, off or on.")
        String action,
        @JsonPropertyDescription("The agent's exit code (status: 0 on, 2 off, 1 error).")
        Integer exitCode,
        @JsonPropertyDescription("RFC 3339 time the agent started.")
        String startedAt,
        @JsonPropertyDescription("RFC 3339 time the agent ended.")
        String finishedAt,
        @JsonPropertyDescription("The end of the agent's output (at most 1024 characters), secret values replaced "
                + "by ***.")
        String output,
        @JsonPropertyDescription("Why there is no exit code (timeout, agent not found) or what was wrong with the "
                + "method (a template that names a missing annotation, a missing Secret key).")
        String error) {

    /** Most characters of output kept. */
    public static final int MAX_OUTPUT = 1024;
}
