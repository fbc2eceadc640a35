package dev.fencing.e2e.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GoPeerBinaryTest {

    @Test
    void missingMemberlistPackageFailsWithTheInstallCommand(@TempDir Path emptyGocode) {
        assertThatThrownBy(() -> GoPeerBinary.build(ProjectLayout.fromWorkingDirectory(), emptyGocode))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("hashicorp/memberlist 0.2.2 is not installed")
                .hasMessageContaining("golang-go golang-github-hashicorp-memberlist-dev");
    }

    @Test
    void buildsTheReferencePeerOfflineFromDebianPackages() {
        Path binary = GoPeerBinary.build(ProjectLayout.fromWorkingDirectory());

        assertThat(binary).endsWith(Path.of("target", "mlpeer"));
        assertThat(Files.isExecutable(binary)).isTrue();
    }
}
