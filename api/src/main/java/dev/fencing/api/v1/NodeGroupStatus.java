package dev.fencing.api.v1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.PrinterColumn;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;
import java.util.Objects;

/** NodeGroup {@code status}, written by the node-manager controller's leader. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class NodeGroupStatus {

    @JsonPropertyDescription("The metadata.generation this status was computed from.")
    private Long observedGeneration;

    @JsonPropertyDescription("Standard conditions, e.g. Ready and QuorumHealthy, with reasons that say what to "
            + "change.")
    private List<Condition> conditions;

    @JsonPropertyDescription("Fencing mode in effect (Watchdog or Notify).")
    @PrinterColumn(name = "Mode")
    private String mode;

    @JsonPropertyDescription("Expected members of the group (the quorum denominator).")
    @PrinterColumn(name = "Expected")
    private Integer expected;

    @JsonPropertyDescription("Votes needed to hold quorum, resolved.")
    @PrinterColumn(name = "Quorum")
    private Integer quorumSize;

    @JsonPropertyDescription("Members the majority side currently confirms.")
    @PrinterColumn(name = "Heard")
    private Integer heard;

    @JsonPropertyDescription("Agents whose watchdog is armed.")
    @PrinterColumn(name = "Armed")
    private Integer armed;

    @JsonPropertyDescription("Nodes treated as fenced, with the time from which that is safe.")
    private List<FencedNode> fencedNodes;

    @JsonPropertyDescription("Every resolved timing, including tStop and safeToAssumeFencedDelay.")
    private ResolvedTimingsStatus timings;

    /** An empty instance; Jackson fills it. */
    public NodeGroupStatus() {
    }

    /** The metadata.generation this status was computed from. */
    public Long getObservedGeneration() {
        return observedGeneration;
    }

    /** Sets {@code observedGeneration}. */
    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }

    /** Sets {@code observedGeneration} and returns this. */
    public NodeGroupStatus withObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
        return this;
    }

    /** Standard conditions, e.g. */
    public List<Condition> getConditions() {
        return conditions;
    }

    /** Sets {@code conditions}. */
    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions;
    }

    /** Sets {@code conditions} and returns this. */
    public NodeGroupStatus withConditions(List<Condition> conditions) {
        this.conditions = conditions;
        return this;
    }

    /** Fencing mode in effect (Watchdog or Notify). */
    public String getMode() {
        return mode;
    }

    /** Sets {@code mode}. */
    public void setMode(String mode) {
        this.mode = mode;
    }

    /** Sets {@code mode} and returns this. */
    public NodeGroupStatus withMode(String mode) {
        this.mode = mode;
        return this;
    }

    /** Expected members of the group (the quorum denominator). */
    public Integer getExpected() {
        return expected;
    }

    /** Sets {@code expected}. */
    public void setExpected(Integer expected) {
        this.expected = expected;
    }

    /** Sets {@code expected} and returns this. */
    public NodeGroupStatus withExpected(Integer expected) {
        this.expected = expected;
        return this;
    }

    /** Votes needed to hold quorum, resolved. */
    public Integer getQuorumSize() {
        return quorumSize;
    }

    /** Sets {@code quorumSize}. */
    public void setQuorumSize(Integer quorumSize) {
        this.quorumSize = quorumSize;
    }

    /** Sets {@code quorumSize} and returns this. */
    public NodeGroupStatus withQuorumSize(Integer quorumSize) {
        this.quorumSize = quorumSize;
        return this;
    }

    /** Members the majority side currently confirms. */
    public Integer getHeard() {
        return heard;
    }

    /** Sets {@code heard}. */
    public void setHeard(Integer heard) {
        this.heard = heard;
    }

    /** Sets {@code heard} and returns this. */
    public NodeGroupStatus withHeard(Integer heard) {
        this.heard = heard;
        return this;
    }

    /** Agents whose watchdog is armed. */
    public Integer getArmed() {
        return armed;
    }

    /** Sets {@code armed}. */
    public void setArmed(Integer armed) {
        this.armed = armed;
    }

    /** Sets {@code armed} and returns this. */
    public NodeGroupStatus withArmed(Integer armed) {
        this.armed = armed;
        return this;
    }

    /** Nodes treated as fenced, with the time from which that is safe. */
    public List<FencedNode> getFencedNodes() {
        return fencedNodes;
    }

    /** Sets {@code fencedNodes}. */
    public void setFencedNodes(List<FencedNode> fencedNodes) {
        this.fencedNodes = fencedNodes;
    }

    /** Sets {@code fencedNodes} and returns this. */
    public NodeGroupStatus withFencedNodes(List<FencedNode> fencedNodes) {
        this.fencedNodes = fencedNodes;
        return this;
    }

    /** Every resolved timing, including tStop and safeToAssumeFencedDelay. */
    public ResolvedTimingsStatus getTimings() {
        return timings;
    }

    /** Sets {@code timings}. */
    public void setTimings(ResolvedTimingsStatus timings) {
        this.timings = timings;
    }

    /** Sets {@code timings} and returns this. */
    public NodeGroupStatus withTimings(ResolvedTimingsStatus timings) {
        this.timings = timings;
        return this;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof NodeGroupStatus other)) {
            return false;
        }
        return Objects.equals(observedGeneration, other.observedGeneration)
                && Objects.equals(conditions, other.conditions)
                && Objects.equals(mode, other.mode)
                && Objects.equals(expected, other.expected)
                && Objects.equals(quorumSize, other.quorumSize)
                && Objects.equals(heard, other.heard)
                && Objects.equals(armed, other.armed)
                && Objects.equals(fencedNodes, other.fencedNodes)
                && Objects.equals(timings, other.timings);
    }

    @Override
    public int hashCode() {
        return Objects.hash(observedGeneration, conditions, mode, expected, quorumSize, heard, armed, fencedNodes,
                timings);
    }

    @Override
    public String toString() {
        return "NodeGroupStatus{observedGeneration=" + observedGeneration
                + ", conditions=" + conditions
                + ", mode=" + mode
                + ", expected=" + expected
                + ", quorumSize=" + quorumSize
                + ", heard=" + heard
                + ", armed=" + armed
                + ", fencedNodes=" + fencedNodes
                + ", timings=" + timings
                + "}";
    }
}
