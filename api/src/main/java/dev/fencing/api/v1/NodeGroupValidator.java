package dev.fencing.api.v1;

import dev.fencing.policy.FencingSpecReader;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.policy.Violation;
import java.util.ArrayList;
import java.util.List;

/**
 * Validates a NodeGroup with the same rules wherever it is checked: what the CRD schema and CEL express (repeated
 * here because a Deckhouse-owned CRD does not carry them) and what they cannot (relations between timings, the
 * quorum size against the number of expected members), all through {@link NodeGroupFencing} and
 * {@link PolicyResolver}.
 */
public final class NodeGroupValidator {

    private NodeGroupValidator() {
    }

    /**
     * Every problem of the NodeGroup for a group of {@code expectedMembers}; empty when it is valid.
     *
     * @param expectedMembers expected members of the group (nodes in it and not being removed)
     */
    public static List<Violation> validate(NodeGroup nodeGroup, int expectedMembers) {
        List<Violation> out = new ArrayList<>();
        NodeGroupSpec spec = nodeGroup.getSpec();
        if (spec == null) {
            out.add(new Violation("spec",
                    "NodeGroup has no spec; set spec.nodeType (and spec.fencing to enable fencing)"));
            return List.copyOf(out);
        }
        if (spec.getNodeType() == null) {
            out.add(new Violation("spec.nodeType",
                    "nodeType is missing; set it to CloudEphemeral, CloudPermanent, CloudStatic or Static"));
        }
        if (spec.getFencing() != null) {
            FencingSpecReader.Result mapping = NodeGroupFencing.map(spec.getFencing());
            out.addAll(mapping.valid()
                    ? PolicyResolver.validate(mapping.spec(), expectedMembers)
                    : mapping.violations());
        }
        return List.copyOf(out);
    }

    /**
     * Accepted but risky choices (see {@link PolicyResolver#warnings}); empty when fencing is off or the fencing
     * strings do not parse (then {@link #validate} reports them).
     */
    public static List<Violation> warnings(NodeGroup nodeGroup, int expectedMembers) {
        if (!NodeGroupFencing.fencingEnabled(nodeGroup)) {
            return List.of();
        }
        FencingSpecReader.Result mapping = NodeGroupFencing.map(nodeGroup);
        return mapping.valid() ? PolicyResolver.warnings(mapping.spec(), expectedMembers) : List.of();
    }
}
