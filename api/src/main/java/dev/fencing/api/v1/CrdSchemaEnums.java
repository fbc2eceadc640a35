package dev.fencing.api.v1;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Enumerations used only to give string fields an {@code enum} in the generated CRD schema (via
 * {@code @SchemaFrom}). The model fields stay strings so that an unexpected value written by another version of the
 * CRD is reported as a Violation by {@link NodeGroupFencing} instead of failing deserialization of the whole object.
 * {@code CrdSchemaTest} checks these spellings equal the fencing-policy enums' {@code crdValue()}.
 */
final class CrdSchemaEnums {

    private CrdSchemaEnums() {
    }

    enum ModeValue {
        @JsonProperty("Watchdog") WATCHDOG,
        @JsonProperty("Notify") NOTIFY
    }

    enum QuorumLossActionValue {
        @JsonProperty("Fence") FENCE,
        @JsonProperty("Exclude") EXCLUDE,
        @JsonProperty("Wait") WAIT
    }

    enum ProfileValue {
        @JsonProperty("Auto") AUTO,
        @JsonProperty("Critical") CRITICAL,
        @JsonProperty("Medium") MEDIUM,
        @JsonProperty("Moderate") MODERATE,
        @JsonProperty("Slow") SLOW
    }

    enum TieBreakerValue {
        @JsonProperty("ControlPlane") CONTROL_PLANE,
        @JsonProperty("LowestName") LOWEST_NAME,
        @JsonProperty("Disk") DISK,
        @JsonProperty("APIReachable") API_REACHABLE
    }

    enum AfterFenceValue {
        @JsonProperty("Auto") AUTO,
        @JsonProperty("Taint") TAINT,
        @JsonProperty("DeleteNode") DELETE_NODE
    }
}
