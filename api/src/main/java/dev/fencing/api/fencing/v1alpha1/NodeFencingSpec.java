package dev.fencing.api.fencing.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * {@code NodeFencing.spec}: what is fenced and why; immutable.
 *
 * @param nodeName  the node
 * @param nodeGroup its NodeGroup
 * @param reason    why the controller escalated
 * @param config    the NodeFencingConfig whose stages run
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "self == oldSelf", message = NodeFencingSpec.IMMUTABLE_MESSAGE)
public record NodeFencingSpec(
        @JsonPropertyDescription("The node being fenced.")
        @Required
        String nodeName,
        @JsonPropertyDescription("The node's NodeGroup.")
        String nodeGroup,
        @JsonPropertyDescription("Why the controller escalated, e.g. 'unheard past safe-to-assume-fenced + 30s'.")
        String reason,
        @JsonPropertyDescription("Name of the NodeFencingConfig whose stages run.")
        @Required
        String config) {

    /** CEL message when the spec is edited. */
    public static final String IMMUTABLE_MESSAGE = "spec is immutable: a NodeFencing records one fencing event";
}
