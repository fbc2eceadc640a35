package dev.fencing.api.v1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.fencing.policy.DurationFormat;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.util.Objects;

/** {@code spec.fencing.storm}: limits on how many of the group's nodes the controller fences, and when. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class FencingStorm {

    /** The CEL message for a minHealthy that is neither a percentage nor a count. */
    static final String MIN_HEALTHY_MESSAGE = "minHealthy must be a percentage from 0% to 100% such as \"50%\", "
            + "or a count of 0 or more";

    @JsonPropertyDescription("Fencing is admitted only while more than this many of the group's nodes are healthy: "
            + "a percentage such as \"50%\" or a count such as 3. Half the group or more failing at once (a switch, "
            + "a rack) fences nobody. Default \"50%\".")
    @ValidationRule(value = "type(self) == string ? self.matches('^[0-9]{1,3}%$') && int(self.replace('%', '')) "
            + "<= 100 : self >= 0", message = MIN_HEALTHY_MESSAGE)
    private IntOrString minHealthy;

    @JsonPropertyDescription("Fencings of the group in progress at once (an out-of-service taint not yet removed, "
            + "a Node being deleted, a power fence running). Default 1.")
    @Min(1)
    private Integer maxConcurrent;

    @JsonPropertyDescription("After a minHealthy limit (the group's or the cluster's) last held, no new fencing "
            + "starts for this long, e.g. 10m. Default 10m.")
    @Pattern(DurationFormat.PATTERN)
    private String cooldown;

    /** An empty instance; Jackson fills it. */
    public FencingStorm() {
    }

    /** The minimum of healthy nodes to exceed. */
    public IntOrString getMinHealthy() {
        return minHealthy;
    }

    /** Sets {@code minHealthy}. */
    public void setMinHealthy(IntOrString minHealthy) {
        this.minHealthy = minHealthy;
    }

    /** Sets {@code minHealthy} and returns this. */
    public FencingStorm withMinHealthy(IntOrString minHealthy) {
        this.minHealthy = minHealthy;
        return this;
    }

    /** Fencings in progress at once. */
    public Integer getMaxConcurrent() {
        return maxConcurrent;
    }

    /** Sets {@code maxConcurrent}. */
    public void setMaxConcurrent(Integer maxConcurrent) {
        this.maxConcurrent = maxConcurrent;
    }

    /** Sets {@code maxConcurrent} and returns this. */
    public FencingStorm withMaxConcurrent(Integer maxConcurrent) {
        this.maxConcurrent = maxConcurrent;
        return this;
    }

    /** The pause after a minHealthy limit held. */
    public String getCooldown() {
        return cooldown;
    }

    /** Sets {@code cooldown}. */
    public void setCooldown(String cooldown) {
        this.cooldown = cooldown;
    }

    /** Sets {@code cooldown} and returns this. */
    public FencingStorm withCooldown(String cooldown) {
        this.cooldown = cooldown;
        return this;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof FencingStorm other)) {
            return false;
        }
        return Objects.equals(minHealthy, other.minHealthy) && Objects.equals(maxConcurrent, other.maxConcurrent)
                && Objects.equals(cooldown, other.cooldown);
    }

    @Override
    public int hashCode() {
        return Objects.hash(minHealthy, maxConcurrent, cooldown);
    }

    @Override
    public String toString() {
        return "FencingStorm{minHealthy=" + minHealthy + ", maxConcurrent=" + maxConcurrent + ", cooldown="
                + cooldown + "}";
    }
}
