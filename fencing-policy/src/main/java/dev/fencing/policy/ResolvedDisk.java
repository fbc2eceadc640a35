package dev.fencing.policy;

import java.time.Duration;
import java.util.Objects;

/**
 * The shared-disk arbiter in effect for a group.
 *
 * @param device    absolute path of the shared block device
 * @param required  quorum needs the network AND the disk
 * @param ioTimeout a read or write pending longer counts as disk lost
 */
public record ResolvedDisk(String device, boolean required, Duration ioTimeout) {

    /** Rejects a missing device or a non-positive timeout. */
    public ResolvedDisk {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(ioTimeout, "ioTimeout");
    }
}
