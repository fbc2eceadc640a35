package dev.fencing.api.v1;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.PreserveUnknownFields;
import io.fabric8.crd.generator.annotation.PrinterColumn;
import io.fabric8.generator.annotation.Required;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/** NodeGroup {@code spec}: the fields this project reads. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@PreserveUnknownFields
public final class NodeGroupSpec {

    @JsonPropertyDescription("CloudEphemeral, CloudPermanent, CloudStatic or Static.")
    @Required
    @PrinterColumn(name = "Type")
    private NodeType nodeType;

    @JsonPropertyDescription("Fencing policy of the group; absent = fencing off.")
    private Fencing fencing;

    // Deckhouse's NodeGroup has many more spec fields (cloudInstances, kubelet, ...): keep them on a round trip.
    @JsonAnyGetter
    @JsonAnySetter
    @JsonIgnore
    private final Map<String, Object> additionalProperties = new LinkedHashMap<>();

    /** An empty instance; Jackson fills it. */
    public NodeGroupSpec() {
    }

    /** CloudEphemeral, CloudPermanent, CloudStatic or Static. */
    public NodeType getNodeType() {
        return nodeType;
    }

    /** Sets {@code nodeType}. */
    public void setNodeType(NodeType nodeType) {
        this.nodeType = nodeType;
    }

    /** Sets {@code nodeType} and returns this. */
    public NodeGroupSpec withNodeType(NodeType nodeType) {
        this.nodeType = nodeType;
        return this;
    }

    /** Fencing policy of the group. */
    public Fencing getFencing() {
        return fencing;
    }

    /** Sets {@code fencing}. */
    public void setFencing(Fencing fencing) {
        this.fencing = fencing;
    }

    /** Sets {@code fencing} and returns this. */
    public NodeGroupSpec withFencing(Fencing fencing) {
        this.fencing = fencing;
        return this;
    }

    /** Spec fields this model does not know (other Deckhouse NodeGroup fields), kept as read; modifiable. */
    public Map<String, Object> additionalProperties() {
        return additionalProperties;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof NodeGroupSpec other)) {
            return false;
        }
        return Objects.equals(nodeType, other.nodeType)
                && Objects.equals(fencing, other.fencing)
                && additionalProperties.equals(other.additionalProperties);
    }

    @Override
    public int hashCode() {
        return Objects.hash(nodeType, fencing, additionalProperties);
    }

    @Override
    public String toString() {
        return "NodeGroupSpec{nodeType=" + nodeType
                + ", fencing=" + fencing
                + ", additionalProperties=" + additionalProperties
                + "}";
    }
}
