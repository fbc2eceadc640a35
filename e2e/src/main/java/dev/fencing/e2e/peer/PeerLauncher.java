package dev.fencing.e2e.peer;

import dev.fencing.e2e.process.JsonLinesProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns a {@link PeerSpec} into a running process of either implementation.
 *
 * @param goBinary      the built Go 0.2.2 peer ({@link GoPeerBinary#build}), for {@link PeerKind#GO}
 * @param nodeJar       the Java node jar ({@link NodeJar#locate}); null when only Go peers are started
 * @param javaOptions   JVM flags for Java nodes (small heap, quick start)
 * @param commandPrefix prepended to every command, e.g. {@code ip netns exec NS}; empty on the host
 * @param moduleGoBinaries the Go peers built from the module proxy ({@link PeerKind#GO_054},
 *                      {@link PeerKind#GO_LATEST}) this launcher can start; empty when only 0.2.2 is needed
 */
public record PeerLauncher(Path goBinary, Path nodeJar, List<String> javaOptions, List<String> commandPrefix,
                           Map<PeerKind, Path> moduleGoBinaries) {

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
        moduleGoBinaries = Map.copyOf(moduleGoBinaries);
    }

    /** A launcher for Java nodes and the 0.2.2 Go peer only. */
    public PeerLauncher(Path goBinary, Path nodeJar, List<String> javaOptions, List<String> commandPrefix) {
        this(goBinary, nodeJar, javaOptions, commandPrefix, Map.of());
    }

    /**
     * A launcher for the host namespace with the Java node and the given Go kinds, each built if needed (0.2.2 is
     * always built: it is the default Go peer).
     */
    public static PeerLauncher forHost(ProjectLayout layout, Set<PeerKind> goKinds) {
        Map<PeerKind, Path> modules = new EnumMap<>(PeerKind.class);
        for (PeerKind kind : goKinds) {
            if (kind.isGo() && kind != PeerKind.GO) {
                modules.put(kind, GoPeerBinary.build(layout, kind));
            }
        }
        return new PeerLauncher(GoPeerBinary.build(layout), NodeJar.locate(layout), DEFAULT_JAVA_OPTIONS, List.of(),
                modules);
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
        return new PeerLauncher(goBinary, nodeJar, javaOptions, prefix, moduleGoBinaries);
    }

    /** @return the full command line for {@code spec} on {@code kind} */
    public List<String> command(PeerKind kind, PeerSpec spec) {
        List<String> command = new ArrayList<>(commandPrefix);
        switch (kind) {
            case GO -> command.add(goBinary.toString());
            case GO_054, GO_LATEST -> {
                Path binary = moduleGoBinaries.get(kind);
                if (binary == null) {
                    throw new IllegalStateException("the memberlist " + kind.memberlistVersion() + " Go peer was not "
                            + "built for this launcher; create it with PeerLauncher.forHost(layout, Set.of(" + kind
                            + "))");
                }
                command.add(binary.toString());
            }
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
