package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OptionalCrdCopyTest {

    static Path generatedCrd() {
        return Path.of(System.getProperty("crd.generated.file", "../api/crds/nodegroups.deckhouse.io-v1.yml"))
                .toAbsolutePath().normalize();
    }

    @Test
    void chartCopyOfTheNodeGroupCrdIsIdenticalToTheGeneratedOne() throws IOException {
        Optional<String> problem = CrdCopyCheck.problem(FencingChart.dir().resolve(CrdCopyCheck.CHART_COPY),
                generatedCrd());

        assertThat(problem).as(problem.orElse("")).isEmpty();
    }

    @Test
    void aChangedCopyIsReportedWithTheLineAndTheRefreshCommand(@TempDir Path dir) throws IOException {
        Path generated = dir.resolve("generated.yml");
        Path copy = dir.resolve("copy.yml");
        Files.writeString(generated, "kind: CustomResourceDefinition\nspec:\n  group: deckhouse.io\n");
        Files.writeString(copy, "kind: CustomResourceDefinition\nspec:\n  group: example.org\n");

        assertThat(CrdCopyCheck.problem(copy, generated)).hasValueSatisfying(message -> assertThat(message)
                .contains("line 3", "group: deckhouse.io", "group: example.org", CrdCopyCheck.REFRESH));
    }

    @Test
    void aTruncatedOrMissingCopyIsReported(@TempDir Path dir) throws IOException {
        Path generated = dir.resolve("generated.yml");
        Files.writeString(generated, "a: 1\nb: 2\n");
        Path truncated = dir.resolve("truncated.yml");
        Files.writeString(truncated, "a: 1\n");

        assertThat(CrdCopyCheck.problem(truncated, generated)).hasValueSatisfying(m -> assertThat(m)
                .contains("prefix", CrdCopyCheck.REFRESH));
        assertThat(CrdCopyCheck.problem(dir.resolve("absent.yml"), generated)).hasValueSatisfying(m -> assertThat(m)
                .contains("missing", CrdCopyCheck.REFRESH));
        Files.writeString(truncated, "a: 1\nb: 2\n");
        assertThat(CrdCopyCheck.problem(truncated, generated)).isEmpty();
    }
}
