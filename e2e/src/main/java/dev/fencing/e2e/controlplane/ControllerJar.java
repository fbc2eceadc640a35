package dev.fencing.e2e.controlplane;

import dev.fencing.e2e.peer.ProjectLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** Finds the executable node-manager-controller jar ({@code java -jar}) that the reactor build packages. */
public final class ControllerJar {

    /** The packaged jar only: not original-, -sources, -tests or a shade plugin's intermediate -shaded jar. */
    private static final Pattern RELEASE_JAR = Pattern.compile("node-manager-controller-[0-9][0-9.]*(-SNAPSHOT)?\\.jar");
    private static final String BUILD = "build it first: ./mvnw -pl node-manager-controller -am package -DskipTests";

    private ControllerJar() {
    }

    /**
     * @return {@code node-manager-controller/target/node-manager-controller-<version>.jar} (the newest, if several)
     * @throws IllegalStateException when it is absent or not a self-contained executable jar
     */
    public static Path locate(ProjectLayout layout) {
        Path target = layout.repoRoot().resolve("node-manager-controller/target");
        List<Path> jars = List.of();
        if (Files.isDirectory(target)) {
            try (Stream<Path> files = Files.list(target)) {
                jars = files.filter(p -> RELEASE_JAR.matcher(p.getFileName().toString()).matches()).sorted(Comparator.comparingLong((Path p) -> p.toFile().lastModified()).reversed()).toList();
            } catch (IOException e) {
                throw new IllegalStateException("cannot list " + target + ": " + e.getMessage(), e);
            }
        }
        if (jars.isEmpty()) {
            throw new IllegalStateException("the controller jar (node-manager-controller/target/"
                    + "node-manager-controller-<version>.jar) is missing; " + BUILD);
        }
        Path jar = jars.get(0);
        try (JarFile file = new JarFile(jar.toFile())) {
            if (file.getManifest() == null || file.getManifest().getMainAttributes().getValue("Main-Class") == null) {
                throw new IllegalStateException(jar + " is not executable (no Main-Class); " + BUILD);
            }
            // java -jar ignores the classpath: the shaded jar must carry the operator framework
            if (file.getEntry("io/javaoperatorsdk/operator/Operator.class") == null) {
                throw new IllegalStateException(jar + " does not bundle its dependencies; " + BUILD);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + jar + ": " + e.getMessage(), e);
        }
        return jar;
    }
}
