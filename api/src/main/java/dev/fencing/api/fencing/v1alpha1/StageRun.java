package dev.fencing.api.fencing.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

/**
 * One stage as it ran.
 *
 * @param name       the stage's name
 * @param result     {@code Running}, {@code Succeeded} or {@code Failed}
 * @param attempts   how many times the stage was started (a replica that lost leadership mid-stage leaves it
 *                   {@code Running}; the next leader starts it again)
 * @param startedAt  when the last attempt started
 * @param runner     the controller replica that ran the last attempt
 * @param finishedAt when it finished
 * @param message    why it failed, or what it confirmed
 * @param methods    each method's invocations of the last attempt
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StageRun(
        @JsonPropertyDescription("The stage's name.")
        String name,
        @JsonPropertyDescription("Running, Succeeded or Failed.")
        String result,
        @JsonPropertyDescription("How many times the stage was started (retries after a failed replica included).")
        Integer attempts,
        @JsonPropertyDescription("RFC 3339 time the last attempt started.")
        String startedAt,
        @JsonPropertyDescription("The controller replica (leader election identity) that ran the last attempt; "
                + "another replica starts the stage again only once this attempt's bound has passed.")
        String runner,
        @JsonPropertyDescription("RFC 3339 time the last attempt finished.")
        String finishedAt,
        @JsonPropertyDescription("Why the stage failed, or what it confirmed.")
        String message,
        @JsonPropertyDescription("Each method's agent invocations in the last attempt.")
        List<MethodRun> methods) {

    /** {@code result} while the stage runs. */
    public static final String RUNNING = "Running";
    /** {@code result} of a stage that confirmed the power state. */
    public static final String SUCCEEDED = "Succeeded";
    /** {@code result} of a stage that did not. */
    public static final String FAILED = "Failed";
}
