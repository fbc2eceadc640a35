package dev.fencing.e2e.image;

import dev.fencing.e2e.process.CommandResult;
import dev.fencing.e2e.process.HostCommand;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes this machine able to run crun containers. crun refuses a hybrid cgroup layout (v1 hierarchies under
 * {@code /sys/fs/cgroup} plus a cgroup2 mount at {@code /sys/fs/cgroup/unified}) while any controller is still
 * attached to the cgroup2 hierarchy ("cgroups in hybrid mode not supported, drop all controllers from cgroupv2").
 * A controller serves only one hierarchy, so mounting a v1 hierarchy for each controller that
 * {@code unified/cgroup.controllers} lists moves it off cgroup2 (on these machines: {@code hugetlb}). Idempotent, and
 * nothing is done on a pure v1 or pure v2 layout or when the list is already empty.
 */
public final class CrunHost {

    private static final Logger LOG = LoggerFactory.getLogger(CrunHost.class);
    private static final Path CGROUP = Path.of("/sys/fs/cgroup");
    private static final Duration TIMEOUT = Duration.ofSeconds(15);

    private CrunHost() {
    }

    /**
     * Checks crun and umoci are installed and moves the cgroup2 controllers of a hybrid layout to v1 hierarchies.
     *
     * @return the crun version line
     * @throws IllegalStateException when a tool is missing or a controller cannot be moved
     */
    public static String prepare() {
        String version = HostCommand.check(List.of("crun", "--version"), TIMEOUT).lines().findFirst().orElse("");
        HostCommand.check(List.of("umoci", "--version"), TIMEOUT);
        moveHybridControllers(CGROUP);
        return version;
    }

    static void moveHybridControllers(Path cgroupRoot) {
        Path controllers = cgroupRoot.resolve("unified").resolve("cgroup.controllers");
        for (String controller : attached(controllers)) {
            Path mountPoint = cgroupRoot.resolve(controller);
            try {
                Files.createDirectories(mountPoint);
            } catch (IOException e) {
                throw new IllegalStateException("cannot create " + mountPoint + ": " + e.getMessage(), e);
            }
            CommandResult mount = HostCommand.run(List.of("mount", "-t", "cgroup", "-o", controller, "cgroup",
                    mountPoint.toString()), TIMEOUT);
            LOG.info("event=cgroup-controller-moved controller={} mount_point={} ok={}", controller, mountPoint,
                    mount.ok());
        }
        List<String> left = attached(controllers);
        if (!left.isEmpty()) {
            throw new IllegalStateException("crun cannot run here: controllers " + left + " are still attached to the "
                    + "cgroup2 hierarchy of a hybrid layout (" + controllers + "); mount each as a v1 hierarchy, e.g. "
                    + "mkdir -p " + cgroupRoot + "/" + left.get(0) + " && mount -t cgroup -o " + left.get(0)
                    + " cgroup " + cgroupRoot + "/" + left.get(0));
        }
    }

    private static List<String> attached(Path controllers) {
        if (!Files.isRegularFile(controllers)) {
            return List.of();
        }
        try {
            String text = Files.readString(controllers, StandardCharsets.US_ASCII).strip();
            return text.isEmpty() ? List.of() : List.of(text.split("\\s+"));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + controllers + ": " + e.getMessage(), e);
        }
    }
}
