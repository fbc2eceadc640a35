package dev.fencing.api.v1;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CrdDriftCheckTest {

    @TempDir
    Path dir;

    @Test
    void identicalFilesPass() throws Exception {
        Path committed = Files.writeString(dir.resolve("c.yml"), "a: 1\nb: 2\n");
        Path generated = Files.writeString(dir.resolve("g.yml"), "a: 1\nb: 2\n");
        assertThat(CrdDriftCheck.compare(committed, generated)).isEmpty();
    }

    @Test
    void aChangedLineFailsWithTheLineAndTheRefreshCommand() throws Exception {
        Path committed = Files.writeString(dir.resolve("c.yml"), "a: 1\nb: 2\n");
        Path generated = Files.writeString(dir.resolve("g.yml"), "a: 1\nb: 3\n");
        assertThat(CrdDriftCheck.compare(committed, generated)).hasValueSatisfying(message -> assertThat(message)
                .contains("is stale")
                .contains("at line 2 (committed: 'b: 2', generated: 'b: 3')")
                .contains("./mvnw -pl api process-classes -Dcrd.update"));
    }

    @Test
    void aTruncatedCommittedFileFails() throws Exception {
        Path committed = Files.writeString(dir.resolve("c.yml"), "a: 1\n");
        Path generated = Files.writeString(dir.resolve("g.yml"), "a: 1\nb: 2\n");
        assertThat(CrdDriftCheck.compare(committed, generated))
                .hasValueSatisfying(m -> assertThat(m).contains("committed: '<end of file>', generated: 'b: 2'"));
    }

    @Test
    void aMissingCommittedFileFailsWithTheCommand() throws Exception {
        Path generated = Files.writeString(dir.resolve("g.yml"), "a: 1\n");
        assertThat(CrdDriftCheck.compare(dir.resolve("c.yml"), generated))
                .hasValueSatisfying(m -> assertThat(m).contains("is missing; create it with `./mvnw -pl api "
                        + "process-classes -Dcrd.update`"));
    }
}
