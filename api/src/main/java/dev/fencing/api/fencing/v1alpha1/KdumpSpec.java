package dev.fencing.api.fencing.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;

/**
 * {@code spec.kdump}.
 *
 * @param enabled whether the controller waits for {@code fence_kdump_send} messages from these nodes
 * @param timeout the longest the power stages wait for a dump, from its first message
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record KdumpSpec(
        @JsonPropertyDescription("Listen for fence_kdump_send messages from these nodes: a node that sends them "
                + "counts as fenced (its pods may move) while the power stages wait. Default false.")
        Boolean enabled,
        @JsonPropertyDescription("The longest the power stages wait for a dump, from the node's first message; "
                + "they also start once messages stop (none for 30s, three of fence_kdump_send's 10s intervals). "
                + "Default 10m.")
        @Pattern(Durations.PATTERN)
        String timeout) {

    /** Default of {@code timeout}. */
    public static final String DEFAULT_TIMEOUT = "10m";

    /** Whether kdump is on. */
    public boolean enabledOrDefault() {
        return Boolean.TRUE.equals(enabled);
    }
}
