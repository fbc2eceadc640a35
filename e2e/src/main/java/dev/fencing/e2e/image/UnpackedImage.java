package dev.fencing.e2e.image;

import java.nio.file.Path;
import java.util.List;

/**
 * An image unpacked for a container runtime: its root filesystem and the process settings of its config.
 *
 * @param rootfs     the unpacked root filesystem
 * @param entrypoint the image's entrypoint
 * @param env        the image's environment ({@code NAME=value})
 * @param uid        the image's user
 * @param gid        the image's group
 */
public record UnpackedImage(Path rootfs, List<String> entrypoint, List<String> env, int uid, int gid) {

    /** Copies. */
    public UnpackedImage {
        entrypoint = List.copyOf(entrypoint);
        env = List.copyOf(env);
    }
}
