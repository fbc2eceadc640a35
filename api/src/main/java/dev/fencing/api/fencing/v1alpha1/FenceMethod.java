package dev.fencing.api.fencing.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

/**
 * One fence method: a ClusterLabs fence agent and what it is told on stdin.
 *
 * @param name             method name, unique in the stage
 * @param agent            the agent's executable name, {@code fence_*}
 * @param parameters       stdin lines; values may use {@code $(NODE_NAME)} and {@code $(NODE_ANNOTATION:key)}
 * @param secretParameters stdin parameters read from Secrets (passwords), never logged or recorded
 */
// A rule on a record component would be emitted twice (field and accessor), hence on the type with a fieldPath.
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "!has(self.secretParameters) || !has(self.parameters) || "
        + "self.secretParameters.all(s, !self.parameters.exists(p, p.name == s.parameter))",
        message = FenceMethod.PARAMETER_TWICE_MESSAGE, fieldPath = ".secretParameters")
@ValidationRule(value = "!has(self.parameters) || "
        + "self.parameters.all(p, self.parameters.exists_one(q, q.name == p.name))",
        message = FenceMethod.DUPLICATE_PARAMETER_MESSAGE, fieldPath = ".parameters")
public record FenceMethod(
        @JsonPropertyDescription("Method name (lowercase letters, digits, '-'), unique in the stage.")
        @Required
        @Pattern(FenceStage.NAME_PATTERN)
        @Size(max = 63)
        String name,
        @JsonPropertyDescription("ClusterLabs fence agent run by the controller, e.g. fence_ipmilan (looked up in "
                + "the controller's fence agent directory, /usr/sbin by default).")
        @Required
        @Pattern(FenceMethod.AGENT_PATTERN)
        @Size(max = 64)
        String agent,
        @JsonPropertyDescription("Parameters written to the agent's stdin as name=value lines (e.g. ip, username, "
                + "lanplus). Values may use $(NODE_NAME) and $(NODE_ANNOTATION:<key>). 'action' is set by the "
                + "controller (status, off, on).")
        @Size(max = 32)
        List<FenceParameter> parameters,
        @JsonPropertyDescription("Parameters whose values come from Secret keys (e.g. password). The controller "
                + "reads them when it runs the agent and never logs or records them.")
        @Size(max = 8)
        List<SecretParameter> secretParameters) {

    /** Agent executable names: no path, only ClusterLabs-style names. */
    public static final String AGENT_PATTERN = "^fence_[a-z0-9_]+$";
    /** Parameter names as the fence agents spell them on stdin. */
    public static final String PARAMETER_PATTERN = "^[a-z][a-z0-9_-]{0,63}$";
    /** CEL message for a bad parameter name. */
    public static final String PARAMETER_NAME_MESSAGE = "parameter names are lowercase letters, digits, '_' and "
            + "'-' (as the fence agent spells them on stdin), and 'action' is set by the controller";
    /** CEL message for a parameter listed twice. */
    public static final String DUPLICATE_PARAMETER_MESSAGE = "each parameter may be listed once";
    /** CEL message for a parameter given both as a plain and as a secret parameter. */
    public static final String PARAMETER_TWICE_MESSAGE = "a parameter is either in parameters or in "
            + "secretParameters, not both";
}
