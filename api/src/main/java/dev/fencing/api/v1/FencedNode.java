package dev.fencing.api.v1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.Objects;

/** One entry of {@code status.fencedNodes}: a node the majority treats as fenced. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class FencedNode {

    @JsonPropertyDescription("Node name.")
    private String name;

    @JsonPropertyDescription("RFC 3339 time from which the node is treated as powered off "
            + "(safe-to-assume-fenced).")
    private String fencedAt;

    @JsonPropertyDescription("Why the node is considered fenced.")
    private String reason;

    /** An empty instance; Jackson fills it. */
    public FencedNode() {
    }

    /** Node name. */
    public String getName() {
        return name;
    }

    /** Sets {@code name}. */
    public void setName(String name) {
        this.name = name;
    }

    /** Sets {@code name} and returns this. */
    public FencedNode withName(String name) {
        this.name = name;
        return this;
    }

    /** RFC 3339 time from which the node is treated as powered off (safe-to-assume-fenced). */
    public String getFencedAt() {
        return fencedAt;
    }

    /** Sets {@code fencedAt}. */
    public void setFencedAt(String fencedAt) {
        this.fencedAt = fencedAt;
    }

    /** Sets {@code fencedAt} and returns this. */
    public FencedNode withFencedAt(String fencedAt) {
        this.fencedAt = fencedAt;
        return this;
    }

    /** Why the node is considered fenced. */
    public String getReason() {
        return reason;
    }

    /** Sets {@code reason}. */
    public void setReason(String reason) {
        this.reason = reason;
    }

    /** Sets {@code reason} and returns this. */
    public FencedNode withReason(String reason) {
        this.reason = reason;
        return this;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof FencedNode other)) {
            return false;
        }
        return Objects.equals(name, other.name)
                && Objects.equals(fencedAt, other.fencedAt)
                && Objects.equals(reason, other.reason);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, fencedAt, reason);
    }

    @Override
    public String toString() {
        return "FencedNode{name=" + name
                + ", fencedAt=" + fencedAt
                + ", reason=" + reason
                + "}";
    }
}
