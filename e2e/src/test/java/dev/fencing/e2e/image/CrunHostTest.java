package dev.fencing.e2e.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hybrid-cgroup preparation on a fake {@code /sys/fs/cgroup}: nothing is touched when no controller is attached
 * to the cgroup2 hierarchy (or there is none), and a controller that cannot be moved is a clear error naming it and
 * the command that would move it.
 */
class CrunHostTest {

    @Test
    void pureLayoutWithoutUnifiedHierarchyIsLeftAlone(@TempDir Path cgroup) throws IOException {
        CrunHost.moveHybridControllers(cgroup);

        try (var entries = Files.list(cgroup)) {
            assertThat(entries).isEmpty();
        }
    }

    @Test
    void hybridLayoutWithNoControllerOnCgroup2IsLeftAlone(@TempDir Path cgroup) throws IOException {
        Files.createDirectories(cgroup.resolve("unified"));
        Files.writeString(cgroup.resolve("unified/cgroup.controllers"), "\n");

        CrunHost.moveHybridControllers(cgroup);

        assertThat(cgroup.resolve("hugetlb")).doesNotExist();
    }

    @Test
    void controllerThatCannotBeMovedIsAnErrorNamingItAndTheFix(@TempDir Path cgroup) throws IOException {
        Files.createDirectories(cgroup.resolve("unified"));
        // no kernel has this controller, so its v1 mount fails and it stays listed
        Files.writeString(cgroup.resolve("unified/cgroup.controllers"), "nosuchcontroller\n");

        assertThatThrownBy(() -> CrunHost.moveHybridControllers(cgroup))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("[nosuchcontroller]")
                .hasMessageContaining("mount -t cgroup -o nosuchcontroller cgroup " + cgroup + "/nosuchcontroller");
        assertThat(cgroup.resolve("nosuchcontroller")).isDirectory();
    }
}
