package dev.fencing.api.fencing.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;

/**
 * {@code NodeFencing.status}, written by the controller's leader only.
 *
 * @param phase        where the escalation is
 * @param currentStage the stage running or next to run
 * @param stages       every stage run so far, in order
 * @param recovery     the recovery stage's run
 * @param startedAt    when the escalation started
 * @param kdumpStartedAt the first kdump message from the node in this event
 * @param lastKdumpAt  the last kdump message from the node
 * @param fencedAt     when a stage confirmed power off
 * @param taintedAt    when the out-of-service taint was applied
 * @param recoveredAt  when the node was powered on or returned
 * @param conditions   {@code Fenced}, {@code Recovered}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record NodeFencingStatus(
        @JsonPropertyDescription("Pending, Dumping, Fencing, Fenced, Failed, Recovering or Recovered.")
        NodeFencingPhase phase,
        @JsonPropertyDescription("Name of the stage running or next to run.")
        String currentStage,
        @JsonPropertyDescription("Every stage run so far, in order, with each agent invocation.")
        List<StageRun> stages,
        @JsonPropertyDescription("The recovery stage's run.")
        StageRun recovery,
        @JsonPropertyDescription("RFC 3339 time the escalation started.")
        String startedAt,
        @JsonPropertyDescription("RFC 3339 time of the node's first fence_kdump message in this event.")
        String kdumpStartedAt,
        @JsonPropertyDescription("RFC 3339 time of the last fence_kdump message from the node (written when it "
                + "advanced by 10s or more).")
        String lastKdumpAt,
        @JsonPropertyDescription("RFC 3339 time a stage confirmed the node powered off.")
        String fencedAt,
        @JsonPropertyDescription("RFC 3339 time the out-of-service taint was applied.")
        String taintedAt,
        @JsonPropertyDescription("RFC 3339 time the node was powered on again or returned by itself.")
        String recoveredAt,
        @JsonPropertyDescription("Standard conditions: Fenced, Recovered.")
        List<Condition> conditions) {
}
