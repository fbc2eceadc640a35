package dev.fencing.helm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Compares the chart's copy of the NodeGroup CRD with the one the api module generates; both are read from the
 * checkout when the test runs, so a regenerated CRD that was not copied into the chart fails the build.
 */
final class CrdCopyCheck {

    /** Path of the copy inside the chart. */
    static final String CHART_COPY = "crds-optional/nodegroups.deckhouse.io-v1.yml";
    /** The command that refreshes the copy, run from the repository root. */
    static final String REFRESH = "cp api/crds/nodegroups.deckhouse.io-v1.yml helm/fencing/crds-optional/";

    private CrdCopyCheck() {
    }

    /** Empty when {@code copy} is byte-identical to {@code generated}; otherwise what differs and how to fix it. */
    static Optional<String> problem(Path copy, Path generated) throws IOException {
        if (!Files.isRegularFile(generated)) {
            return Optional.of("the generated CRD " + generated + " does not exist; build the api module"
                    + " (./mvnw -pl api -am verify) to generate it");
        }
        if (!Files.isRegularFile(copy)) {
            return Optional.of("the chart's CRD copy " + copy + " is missing; create it with: " + REFRESH);
        }
        List<String> want = Files.readAllLines(generated);
        List<String> have = Files.readAllLines(copy);
        if (Files.mismatch(copy, generated) == -1) {
            return Optional.empty();
        }
        int line = 0;
        while (line < want.size() && line < have.size() && want.get(line).equals(have.get(line))) {
            line++;
        }
        String detail = line < want.size() && line < have.size()
                ? "first difference at line " + (line + 1) + ": generated \"" + want.get(line).strip()
                        + "\", chart copy \"" + have.get(line).strip() + "\""
                : "one file is a prefix of the other (" + want.size() + " generated lines, " + have.size()
                        + " in the copy, or they differ only in line endings)";
        return Optional.of("helm/fencing/" + CHART_COPY + " differs from api/crds/nodegroups.deckhouse.io-v1.yml ("
                + detail + "); the chart would install a stale NodeGroup CRD. Refresh it from the repository root"
                + " with: " + REFRESH);
    }
}
