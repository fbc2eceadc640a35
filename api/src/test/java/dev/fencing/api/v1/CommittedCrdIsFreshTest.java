package dev.fencing.api.v1;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The build fails here when api/crds/ differs from what the model classes generate. */
class CommittedCrdIsFreshTest {

    private static final Path COMMITTED = Path.of(System.getProperty("crd.committed.dir", "crds"));
    private static final Path GENERATED =
            Path.of(System.getProperty("crd.generated.dir", "target/classes/META-INF/fabric8"));

    @ParameterizedTest
    @ValueSource(strings = {NodeGroup.CRD_NAME, "nodefencingconfigs.fencing.deckhouse.io",
            "nodefencings.fencing.deckhouse.io"})
    void committedCrdMatchesTheGeneratedOne(String crdName) throws Exception {
        Path generated = GENERATED.resolve(crdName + "-v1.yml");
        Optional<String> drift = CrdDriftCheck.compare(COMMITTED.resolve(generated.getFileName()), generated);
        assertThat(drift).as(drift.orElse("")).isEmpty();
    }

    @Test
    void everyCommittedCrdIsStillGenerated() throws Exception {
        try (Stream<Path> files = Files.list(COMMITTED)) {
            List<Path> stale = files.filter(f -> !Files.exists(GENERATED.resolve(f.getFileName()))).toList();
            assertThat(stale).as("committed CRDs no model class generates any more; delete them").isEmpty();
        }
    }
}
