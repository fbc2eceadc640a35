package dev.fencing.api.fencing.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

/**
 * One fence stage: methods run with one execution policy.
 *
 * @param name            stage name, unique in the config
 * @param executionPolicy {@code One}: methods in order until one succeeds; {@code All}: every method must succeed
 * @param mustSucceed     when the stage fails the escalation stops (no later stage, no taint)
 * @param timeout         bound of each fence agent invocation of this stage
 * @param methods         the fence methods
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "self.methods.all(m, self.methods.exists_one(n, n.name == m.name))",
        message = FenceStage.DUPLICATE_METHOD_MESSAGE, fieldPath = ".methods")
public record FenceStage(
        @JsonPropertyDescription("Stage name (lowercase letters, digits, '-'), unique in the config.")
        @Required
        @Pattern(FenceStage.NAME_PATTERN)
        @Size(max = 63)
        String name,
        @JsonPropertyDescription("One (default): the methods in order until one confirms the power state; All: "
                + "every method must confirm it (e.g. both power supplies).")
        ExecutionPolicy executionPolicy,
        @JsonPropertyDescription("When true and the stage fails, the escalation stops as Failed instead of moving "
                + "to the next stage. Default false.")
        Boolean mustSucceed,
        @JsonPropertyDescription("Bound of each fence agent invocation (status, off, on) of this stage, e.g. 60s. "
                + "Default 60s.")
        @Pattern(Durations.PATTERN)
        String timeout,
        @JsonPropertyDescription("Fence methods: a ClusterLabs fence agent with its parameters.")
        @Required
        @Size(min = 1, max = 4)
        List<FenceMethod> methods) {

    /** Stage and method names. */
    public static final String NAME_PATTERN = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$";
    /** CEL message for two methods with one name. */
    public static final String DUPLICATE_METHOD_MESSAGE = "method names must be unique within a stage";
    /** Default of {@code timeout}. */
    public static final String DEFAULT_TIMEOUT = "60s";

    /** The execution policy in effect ({@code One} when unset). */
    public ExecutionPolicy policyOrDefault() {
        return executionPolicy == null ? ExecutionPolicy.One : executionPolicy;
    }

    /** Whether the escalation stops when this stage fails. */
    public boolean mustSucceedOrDefault() {
        return Boolean.TRUE.equals(mustSucceed);
    }
}
