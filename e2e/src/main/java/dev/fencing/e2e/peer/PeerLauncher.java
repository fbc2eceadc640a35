package dev.fencing.e2e.peer;

import dev.fencing.e2e.process.JsonLinesProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a {@link PeerSpec} into a running process of either implementation.
 *
 * @param goBinary      the built Go peer ({@link GoPeerBinary#build})
 * @param nodeJar       the Java node jar ({@link NodeJar#locate}); null when only Go peers are started
 * @param javaOptions   JVM flags for Java nodes (small heap, quick start)
 * @param commandPrefix prepended to every command, e.g. {@code ip netns exec NS}; empty on the host
 */
public record PeerLauncher(Path goBinary, Path nodeJar, List<String> javaOptions, List<String> commandPrefix) {

    /**
     * JVM flags that keep a node small and quick to start on a shared 2-core machine: an explicit heap and an
     * immediate exit on OutOfMemoryError (a node that cannot allocate must not linger half-working).
     */
    public static final List<String> DEFAULT_JAVA_OPTIONS = List.of("-Xms16m", "-Xmx96m",
            "-XX:+ExitOnOutOfMemoryError", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k",
            "-XX:CICompilerCount=1");

    public PeerLauncher {
        javaOptions = List.copyOf(javaOptions);
        commandPrefix = List.copyOf(commandPrefix);
    }

    /** A launcher for the host namespace with both implementations. */
    public static PeerLauncher forHost(ProjectLayout layout) {
        return new PeerLauncher(GoPeerBinary.build(layout), NodeJar.locate(layout), DEFAULT_JAVA_OPTIONS, List.of());
    }

    /** A launcher for the host namespace that can start only Go peers (no node jar needed). */
    public static PeerLauncher goOnly(ProjectLayout layout) {
        return new PeerLauncher(GoPeerBinary.build(layout), null, DEFAULT_JAVA_OPTIONS, List.of());
    }

    /** @return the same launcher running its processes behind {@code prefix} (e.g. inside a network namespace) */
    public PeerLauncher withPrefix(List<String> prefix) {
        return new PeerLauncher(goBinary, nodeJar, javaOptions, prefix);
    }

    /** @return the full command line for {@code spec} on {@code kind} */
    public List<String> command(PeerKind kind, PeerSpec spec) {
        List<String> command = new ArrayList<>(commandPrefix);
        switch (kind) {
            case GO -> command.add(goBinary.toString());
            case JAVA -> {
                if (nodeJar == null) {
                    throw new IllegalStateException("no Java node jar configured for " + spec.name());
                }
                command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
                command.addAll(javaOptions);
                command.add("-jar");
                command.add(nodeJar.toString());
            }
        }
        command.addAll(spec.arguments());
        return command;
    }

    /** Starts the node; its stderr goes to {@code logDir/<name>.err}. */
    public GossipPeer start(PeerKind kind, PeerSpec spec, Path logDir) {
        return new GossipPeer(kind, spec, JsonLinesProcess.start(spec.name(), command(kind, spec), logDir));
    }
}
