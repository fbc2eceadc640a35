package dev.fencing.api.fencing.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;
import java.util.Map;

/**
 * {@code NodeFencingConfig.spec}.
 *
 * @param nodeSelector    labels a Node must carry (all of them) for this config to apply
 * @param nodeNames       Node names this config applies to, in addition to the selector
 * @param stages          fence stages, run in order until one fences the node
 * @param recovery        the stage that powers the node on again (action {@code on})
 * @param escalationGrace how long after safe-to-assume-fenced the controller waits before the stages
 * @param kdump           waiting for a crash dump before the power stages
 * @param powerAction     after a confirmed power-off: leave the node off (default) or power it on again
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "has(self.nodeSelector) || has(self.nodeNames)",
        message = NodeFencingConfigSpec.NO_NODES_MESSAGE)
@ValidationRule(value = "self.stages.all(s, self.stages.exists_one(t, t.name == s.name))",
        message = NodeFencingConfigSpec.DUPLICATE_STAGE_MESSAGE, fieldPath = ".stages")
public record NodeFencingConfigSpec(
        @JsonPropertyDescription("Labels a Node must carry (all of them) for this config to apply.")
        Map<String, String> nodeSelector,
        @JsonPropertyDescription("Node names this config applies to, in addition to nodeSelector.")
        @Size(max = 1000)
        List<String> nodeNames,
        @JsonPropertyDescription("Fence stages, run in order: the first stage that confirms the node powered off "
                + "ends the escalation; a failed stage moves to the next one unless it has mustSucceed.")
        @Required
        @Size(min = 1, max = 8)
        List<FenceStage> stages,
        @JsonPropertyDescription("The stage that powers the node on again (its methods run with action=on), "
                + "when the NodeFencing is annotated fencing.deckhouse.io/recover or the node returns.")
        FenceStage recovery,
        @JsonPropertyDescription("How long after safe-to-assume-fenced a node still unheard is power-fenced, "
                + "e.g. 30s. Default 30s. A node whose agent reported no working watchdog is fenced at once.")
        @Pattern(Durations.PATTERN)
        String escalationGrace,
        @JsonPropertyDescription("Crash dumps: a node that sends fence_kdump messages counts as fenced while "
                + "the power stages wait for the dump to finish.")
        KdumpSpec kdump,
        @JsonPropertyDescription("After a stage confirmed the node powered off: Off (default) leaves it off until "
                + "the NodeFencing is annotated fencing.deckhouse.io/recover; Reboot powers it on again at once "
                + "(each method runs status, off, status, then on), so the node boots and rejoins by itself.")
        FencePowerAction powerAction) {

    /** A config without {@code powerAction} (Off). */
    public NodeFencingConfigSpec(Map<String, String> nodeSelector, List<String> nodeNames, List<FenceStage> stages,
                                 FenceStage recovery, String escalationGrace, KdumpSpec kdump) {
        this(nodeSelector, nodeNames, stages, recovery, escalationGrace, kdump, null);
    }

    /** {@code powerAction}, or Off when not set. */
    public FencePowerAction powerActionOrDefault() {
        return powerAction == null ? FencePowerAction.Off : powerAction;
    }

    /** CEL message when neither {@code nodeSelector} nor {@code nodeNames} is set. */
    public static final String NO_NODES_MESSAGE = "set nodeSelector or nodeNames: a config must name the nodes "
            + "it fences";
    /** CEL message for two stages with one name. */
    public static final String DUPLICATE_STAGE_MESSAGE = "stage names must be unique";
    /** Default of {@code escalationGrace}. */
    public static final String DEFAULT_ESCALATION_GRACE = "30s";
}
