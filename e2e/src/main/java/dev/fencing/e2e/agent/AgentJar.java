package dev.fencing.e2e.agent;

import dev.fencing.e2e.peer.ProjectLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/** Finds the executable fencing-agent jar the reactor build packages before e2e runs. */
public final class AgentJar {

    private AgentJar() {
    }

    /**
     * @return {@code fencing-agent/target/fencing-agent-<version>.jar} (the newest, if several)
     * @throws IllegalStateException when it is absent or not executable ({@code java -jar} needs a Main-Class)
     */
    public static Path locate(ProjectLayout layout) {
        Path target = layout.repoRoot().resolve("fencing-agent/target");
        List<Path> jars = List.of();
        if (Files.isDirectory(target)) {
            try (Stream<Path> files = Files.list(target)) {
                jars = files.filter(p -> {
                    String name = p.getFileName().toString();
                    return name.startsWith("fencing-agent-") && name.endsWith(".jar") && !name.endsWith("-sources.jar")
                            && !name.endsWith("-tests.jar") && !name.endsWith("-javadoc.jar");
                }).sorted((a, b) -> Long.compare(b.toFile().lastModified(), a.toFile().lastModified())).toList();
            } catch (IOException e) {
                throw new IllegalStateException("cannot list " + target + ": " + e.getMessage(), e);
            }
        }
        String build = "build it first: ./mvnw -pl fencing-agent -am package -DskipTests";
        if (jars.isEmpty()) {
            throw new IllegalStateException("the fencing-agent jar (fencing-agent/target/fencing-agent-<version>.jar) "
                    + "is missing; " + build);
        }
        Path jar = jars.get(0);
        try (JarFile file = new JarFile(jar.toFile())) {
            if (file.getManifest() == null || file.getManifest().getMainAttributes().getValue("Main-Class") == null) {
                throw new IllegalStateException(jar + " is not executable (no Main-Class); " + build);
            }
            // java -jar ignores the classpath: the jar must carry its dependencies (picocli stands for all of them)
            if (file.getEntry("picocli/CommandLine.class") == null) {
                throw new IllegalStateException(jar + " does not bundle its dependencies, so java -jar cannot run it");
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + jar + ": " + e.getMessage(), e);
        }
        return jar;
    }
}
