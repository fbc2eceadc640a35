package dev.fencing.policy;

import java.time.Duration;

/**
 * {@code spec.fencing.disk}: the shared block device of the {@code Disk} arbiter (SBD's layout), as written by the
 * user. Null components take their defaults.
 *
 * @param device    absolute path of the shared block device on every node (prepared with
 *                  {@code sbd -d DEV -4 90 create}: msgwait 90 s covers the default timings, see "Choosing msgwait"
 *                  in the fencing-agent README)
 * @param required  true = quorum needs the network AND the disk; default false (losing the disk changes nothing
 *                  while the network quorum holds)
 * @param ioTimeout a disk read or write pending longer counts as disk lost; default {@link #DEFAULT_IO_TIMEOUT}
 */
public record DiskSpec(String device, Boolean required, Duration ioTimeout) {

    /** Default I/O timeout (sbd's {@code timeout_io} is 3 s; a little more for busy SANs). */
    public static final Duration DEFAULT_IO_TIMEOUT = Duration.ofSeconds(5);

    /** Whether quorum needs the disk too. */
    public boolean effectiveRequired() {
        return required != null && required;
    }

    /** The I/O timeout in effect. */
    public Duration effectiveIoTimeout() {
        return ioTimeout != null ? ioTimeout : DEFAULT_IO_TIMEOUT;
    }
}
