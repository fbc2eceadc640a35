package dev.fencing.api.v1;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** Compares a committed CRD file with the one the model classes generate and explains how to refresh it. */
final class CrdDriftCheck {

    static final String REFRESH_COMMAND = "./mvnw -pl api process-classes -Dcrd.update";

    private CrdDriftCheck() {
    }

    /** Empty when both files have the same lines; otherwise a message naming the first difference and the fix. */
    static Optional<String> compare(Path committed, Path generated) throws IOException {
        if (!Files.exists(generated)) {
            return Optional.of("the CRD generator wrote no " + generated + "; run the build through process-classes");
        }
        if (!Files.exists(committed)) {
            return Optional.of(committed + " is missing; create it with `" + REFRESH_COMMAND + "` and commit it");
        }
        List<String> want = Files.readAllLines(generated, StandardCharsets.UTF_8);
        List<String> have = Files.readAllLines(committed, StandardCharsets.UTF_8);
        int lines = Math.max(want.size(), have.size());
        for (int i = 0; i < lines; i++) {
            String w = i < want.size() ? want.get(i) : "<end of file>";
            String h = i < have.size() ? have.get(i) : "<end of file>";
            if (!w.equals(h)) {
                return Optional.of(committed + " is stale: it differs from what the model classes generate at line "
                        + (i + 1) + " (committed: '" + h.strip() + "', generated: '" + w.strip() + "'); refresh it "
                        + "with `" + REFRESH_COMMAND + "` and commit it");
            }
        }
        return Optional.empty();
    }
}
