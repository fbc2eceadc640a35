package dev.fencing.e2e.peer;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the repository and the e2e module are, found by walking up from the working directory, so tests work from
 * the reactor root, from {@code e2e/} and from an IDE.
 *
 * @param repoRoot  the directory holding the parent pom and every module
 * @param e2eModule {@code repoRoot/e2e}
 */
public record ProjectLayout(Path repoRoot, Path e2eModule) {

    /** @return the layout containing the current working directory */
    public static ProjectLayout fromWorkingDirectory() {
        Path start = Path.of("").toAbsolutePath();
        for (Path dir = start; dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("e2e/pom.xml")) && Files.isRegularFile(dir.resolve("memberlist/pom.xml"))) {
                return new ProjectLayout(dir, dir.resolve("e2e"));
            }
        }
        throw new IllegalStateException("cannot find the repository root (a directory with e2e/pom.xml and "
                + "memberlist/pom.xml) above " + start + "; run from inside the checkout");
    }

    /** @return {@code e2e/target}, where built binaries and logs go */
    public Path e2eTarget() {
        return e2eModule.resolve("target");
    }

    /** @return the directory for child-process logs of one test or run */
    public Path logDir(String run) {
        return e2eTarget().resolve("e2e-logs").resolve(run);
    }
}
