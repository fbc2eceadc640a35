package dev.fencing.api.v1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.fencing.policy.DurationFormat;
import io.fabric8.generator.annotation.Pattern;
import java.util.Objects;

/** {@code spec.fencing.disk}: the shared block device of the {@code Disk} arbiter (SBD's on-disk layout). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class FencingDisk {

    @JsonPropertyDescription("Absolute path of the shared block device on every node of the group (e.g. "
            + "/dev/disk/by-id/wwn-0x…), prepared with 'sbd -d DEVICE -4 90 create' (msgwait 90s covers the default "
            + "timings; see Choosing msgwait in the fencing-agent README).")
    @Pattern("^/.*$")
    private String device;

    @JsonPropertyDescription("true: quorum needs the network AND the disk (losing the disk fences); false: losing "
            + "the disk changes nothing while the network quorum holds. Default false.")
    private Boolean required;

    @JsonPropertyDescription("A disk read or write pending longer counts as disk lost (100ms..60s). Default 5s.")
    @Pattern(DurationFormat.PATTERN)
    private String ioTimeout;

    /** An empty instance; Jackson fills it. */
    public FencingDisk() {
    }

    /** The shared block device. */
    public String getDevice() {
        return device;
    }

    /** Sets {@code device}. */
    public void setDevice(String device) {
        this.device = device;
    }

    /** Sets {@code device} and returns this. */
    public FencingDisk withDevice(String device) {
        this.device = device;
        return this;
    }

    /** Quorum needs the disk too. */
    public Boolean getRequired() {
        return required;
    }

    /** Sets {@code required}. */
    public void setRequired(Boolean required) {
        this.required = required;
    }

    /** Sets {@code required} and returns this. */
    public FencingDisk withRequired(Boolean required) {
        this.required = required;
        return this;
    }

    /** The I/O timeout. */
    public String getIoTimeout() {
        return ioTimeout;
    }

    /** Sets {@code ioTimeout}. */
    public void setIoTimeout(String ioTimeout) {
        this.ioTimeout = ioTimeout;
    }

    /** Sets {@code ioTimeout} and returns this. */
    public FencingDisk withIoTimeout(String ioTimeout) {
        this.ioTimeout = ioTimeout;
        return this;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof FencingDisk other)) {
            return false;
        }
        return Objects.equals(device, other.device) && Objects.equals(required, other.required)
                && Objects.equals(ioTimeout, other.ioTimeout);
    }

    @Override
    public int hashCode() {
        return Objects.hash(device, required, ioTimeout);
    }

    @Override
    public String toString() {
        return "FencingDisk{device=" + device + ", required=" + required + ", ioTimeout=" + ioTimeout + "}";
    }
}
