package dev.fencing.api.v1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.util.List;
import java.util.Objects;

/** {@code spec.fencing.quorum}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class FencingQuorum {

    @JsonPropertyDescription("Votes needed to hold quorum: Auto (floor(expected/2)+1) or an integer that is a "
            + "strict majority of the expected members. Default Auto.")
    @ValidationRule(value = "type(self) == string ? self == 'Auto' : self >= 1",
            message = "quorum.size must be Auto or a positive integer")
    private IntOrString size;

    @JsonPropertyDescription("Asked only when exactly half of the expected members are heard; one entry: "
            + "ControlPlane, LowestName, Disk (needs disk.device), APIReachable (not split-brain safe). "
            + "Default [ControlPlane]. A second entry is refused by the controller: a half that gets no answer from "
            + "the first would ask it while the other half holds the first's win.")
    @SchemaFrom(type = CrdSchemaEnums.TieBreakerValue[].class)
    @Size(max = 4)
    @ValidationRule(value = "self.all(t, self.exists_one(u, u == t))",
            message = "each tie-breaker may be listed once; remove the repeat")
    private List<String> tieBreakers;

    /** An empty instance; Jackson fills it. */
    public FencingQuorum() {
    }

    /** Votes needed to hold quorum. */
    public IntOrString getSize() {
        return size;
    }

    /** Sets {@code size}. */
    public void setSize(IntOrString size) {
        this.size = size;
    }

    /** Sets {@code size} and returns this. */
    public FencingQuorum withSize(IntOrString size) {
        this.size = size;
        return this;
    }

    /** Asked in order only when exactly half of the expected members are heard. */
    public List<String> getTieBreakers() {
        return tieBreakers;
    }

    /** Sets {@code tieBreakers}. */
    public void setTieBreakers(List<String> tieBreakers) {
        this.tieBreakers = tieBreakers;
    }

    /** Sets {@code tieBreakers} and returns this. */
    public FencingQuorum withTieBreakers(List<String> tieBreakers) {
        this.tieBreakers = tieBreakers;
        return this;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof FencingQuorum other)) {
            return false;
        }
        return Objects.equals(size, other.size)
                && Objects.equals(tieBreakers, other.tieBreakers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(size, tieBreakers);
    }

    @Override
    public String toString() {
        return "FencingQuorum{size=" + size
                + ", tieBreakers=" + tieBreakers
                + "}";
    }
}
