package dev.fencing.api.fencing.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

/**
 * One fence method as it ran: its agent invocations ({@code status}, the action, {@code status}).
 *
 * @param name        the method's name
 * @param agent       the fence agent
 * @param succeeded   whether the status after the action confirmed the wanted power state
 * @param invocations the agent invocations, in order
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record MethodRun(
        @JsonPropertyDescription("The method's name.")
        String name,
        @JsonPropertyDescription("The fence agent.")
        String agent,
        @JsonPropertyDescription("Whether the status after the action confirmed the wanted power state.")
        Boolean succeeded,
        @JsonPropertyDescription("The agent invocations in order: status, the action, status.")
        List<AgentInvocation> invocations) {
}
