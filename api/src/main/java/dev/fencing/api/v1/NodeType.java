package dev.fencing.api.v1;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Arrays;
import java.util.stream.Collectors;

/** {@code spec.nodeType} of a Deckhouse NodeGroup: decides what recovery after a fence may do with the Node. */
public enum NodeType {
    /** Cloud VMs the platform recreates: a fenced Node may be deleted. */
    @JsonProperty("CloudEphemeral")
    CLOUD_EPHEMERAL("CloudEphemeral"),
    /** Cloud VMs that are kept. */
    @JsonProperty("CloudPermanent")
    CLOUD_PERMANENT("CloudPermanent"),
    /** Static machines in a cloud. */
    @JsonProperty("CloudStatic")
    CLOUD_STATIC("CloudStatic"),
    /** Bare-metal or otherwise static machines: the Node is kept so it can come back. */
    @JsonProperty("Static")
    STATIC("Static");

    private final String crdValue;

    NodeType(String crdValue) {
        this.crdValue = crdValue;
    }

    /** The spelling used in the CRD, e.g. {@code "Static"}. */
    public String crdValue() {
        return crdValue;
    }

    /** True for node types whose machines the platform recreates when the Node is deleted. */
    public boolean recreatedByPlatform() {
        return this == CLOUD_EPHEMERAL;
    }

    /**
     * Parses the CRD spelling.
     *
     * @throws IllegalArgumentException naming the allowed values
     */
    public static NodeType parse(String crdValue) {
        for (NodeType type : values()) {
            if (type.crdValue.equals(crdValue)) {
                return type;
            }
        }
        throw new IllegalArgumentException("nodeType '" + crdValue + "' is not known; use one of "
                + Arrays.stream(values()).map(NodeType::crdValue).collect(Collectors.joining(", ")));
    }
}
