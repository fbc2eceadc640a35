package dev.fencing.nodemanager.model;

import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.Violation;
import java.util.List;
import java.util.Objects;

/**
 * What the group model needs from a NodeGroup: its name, {@code spec.fencing} mapped to the policy module's
 * {@link FencingSpec} (null when fencing is switched off) and the problems found while mapping it (unparseable
 * durations, unknown enum spellings), each with its CRD field path.
 *
 * @param name            NodeGroup name
 * @param generation      metadata.generation (for status.observedGeneration)
 * @param fencing         spec.fencing, or null when absent
 * @param specViolations  mapping problems; validated together with the policy rules
 */
public record GroupSpecView(String name, long generation, FencingSpec fencing, List<Violation> specViolations) {

    /** Copies the list. */
    public GroupSpecView {
        Objects.requireNonNull(name, "name");
        specViolations = List.copyOf(specViolations);
    }

    /** True when spec.fencing is present. */
    public boolean fencingEnabled() {
        return fencing != null || !specViolations.isEmpty();
    }
}
