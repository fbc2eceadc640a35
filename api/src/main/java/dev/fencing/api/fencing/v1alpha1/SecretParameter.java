package dev.fencing.api.fencing.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * A fence agent parameter whose value is a Secret key.
 *
 * @param parameter the stdin parameter name, e.g. {@code password}
 * @param secretRef where the value is
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "self.parameter != 'action'", message = FenceMethod.PARAMETER_NAME_MESSAGE,
        fieldPath = ".parameter")
public record SecretParameter(
        @JsonPropertyDescription("The stdin parameter name, e.g. password.")
        @Required
        @Pattern(FenceMethod.PARAMETER_PATTERN)
        @Size(max = 64)
        String parameter,
        @JsonPropertyDescription("The Secret key holding the value.")
        @Required
        SecretKeyRef secretRef) {
}
