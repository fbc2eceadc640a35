package dev.fencing.api.fencing.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * One stdin line {@code name=value} of a fence agent. A list of these rather than a map: the schema can then bound
 * and check each value (no line break), which it cannot do for map values.
 *
 * @param name  the parameter as the agent spells it on stdin, e.g. {@code ip}
 * @param value its value; may use {@code $(NODE_NAME)} and {@code $(NODE_ANNOTATION:key)}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "self.name != 'action'", message = FenceMethod.PARAMETER_NAME_MESSAGE, fieldPath = ".name")
public record FenceParameter(
        @JsonPropertyDescription("The parameter as the agent spells it on stdin (e.g. ip, username, lanplus); "
                + "'action' is set by the controller.")
        @Required
        @Pattern(FenceMethod.PARAMETER_PATTERN)
        @Size(max = 64)
        String name,
        @JsonPropertyDescription("The value, one line; may use $(NODE_NAME) and $(NODE_ANNOTATION:<key>).")
        @Required
        @Pattern(FenceParameter.VALUE_PATTERN)
        @Size(max = 1024)
        String value) {

    /** One line: a value with a line break would smuggle another parameter onto the agent's stdin. */
    public static final String VALUE_PATTERN = "^[^\\r\\n]*$";
}
