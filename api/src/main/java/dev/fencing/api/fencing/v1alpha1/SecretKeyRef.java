package dev.fencing.api.fencing.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * A key of a Secret.
 *
 * @param namespace the Secret's namespace
 * @param name      the Secret's name
 * @param key       the data key
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SecretKeyRef(
        @JsonPropertyDescription("Namespace of the Secret (the controller's RBAC must allow reading it).")
        @Required
        @Size(max = 63)
        String namespace,
        @JsonPropertyDescription("Name of the Secret.")
        @Required
        @Size(max = 253)
        String name,
        @JsonPropertyDescription("Data key in the Secret.")
        @Required
        @Size(max = 253)
        String key) {
}
