package dev.fencing.e2e.peer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** Finds the runnable Java memberlist node jar the reactor build packages before e2e runs. */
public final class NodeJar {

    private NodeJar() {
    }

    /**
     * @return {@code memberlist/target/memberlist-<version>-node.jar}; the newest when several versions are present
     * @throws IllegalStateException naming the command that builds it, when it is absent
     */
    public static Path locate(ProjectLayout layout) {
        Path target = layout.repoRoot().resolve("memberlist/target");
        List<Path> jars = List.of();
        if (Files.isDirectory(target)) {
            try (Stream<Path> files = Files.list(target)) {
                jars = files.filter(p -> {
                    String name = p.getFileName().toString();
                    return name.startsWith("memberlist-") && name.endsWith("-node.jar");
                }).sorted((a, b) -> Long.compare(modified(b), modified(a))).toList();
            } catch (IOException e) {
                throw new IllegalStateException("cannot list " + target + ": " + e.getMessage(), e);
            }
        }
        if (jars.isEmpty()) {
            throw new IllegalStateException("the Java memberlist node jar (memberlist/target/memberlist-<version>-node.jar)"
                    + " is missing; build it first: ./mvnw -pl memberlist -am package -DskipTests"
                    + " (the full reactor build packages it before e2e)");
        }
        return jars.get(0);
    }

    private static long modified(Path path) {
        try {
            return Files.getLastModifiedTime(path).toMillis();
        } catch (IOException e) {
            return 0;
        }
    }
}
