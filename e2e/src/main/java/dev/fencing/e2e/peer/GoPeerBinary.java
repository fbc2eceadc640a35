package dev.fencing.e2e.peer;

import dev.fencing.e2e.process.CommandResult;
import dev.fencing.e2e.process.HostCommand;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the Go reference peer ({@code e2e/go/src/mlpeer}) for each {@link PeerKind}:
 * <ul>
 *   <li>{@link PeerKind#GO}: GOPATH mode against Debian's hashicorp/memberlist 0.2.2 ({@code -tags memberlist022}) —
 *       offline: GOPATH mode never downloads, and GOPROXY=off makes sure of it;</li>
 *   <li>{@link PeerKind#GO_054} and {@link PeerKind#GO_LATEST}: module mode against the versions pinned by
 *       {@code v054.mod}/{@code v054.sum} and {@code go.mod}/{@code go.sum} ({@code -mod=readonly}, so the pins and
 *       checksums are never changed by a build). The first build downloads the modules from the proxy into Go's
 *       module cache ({@code GOMODCACHE}, by default {@code ~/go/pkg/mod}, which survives {@code mvn clean}); a warm
 *       build needs no network.</li>
 * </ul>
 */
public final class GoPeerBinary {

    private static final Logger LOG = LoggerFactory.getLogger(GoPeerBinary.class);
    /** Where Debian's golang-github-hashicorp-memberlist-dev puts the library. */
    public static final Path DEBIAN_GOCODE = Path.of("/usr/share/gocode");
    private static final String INSTALL_HINT = "scripts/test installs them: apt-get install golang-go "
            + "golang-github-hashicorp-memberlist-dev";

    /** The latest hashicorp/memberlist release, pinned in {@code e2e/go/src/mlpeer/go.mod}. */
    public static final String LATEST_VERSION = "v0.7.0";
    /** A Go new enough for the module builds: $FENCING_GO (scripts/test sets it from scripts/go-toolchain), else
     * the machine's /usr/local/go. */
    private static final String GO_MODERN = System.getenv().getOrDefault("FENCING_GO", "/usr/local/go/bin/go");
    private static final String DEFAULT_PROXY = "https://proxy.golang.org";

    private GoPeerBinary() {
    }

    /**
     * Builds (or incrementally rebuilds) the peer binary of a Go kind.
     *
     * @return {@code e2e/target/mlpeer} for {@link PeerKind#GO}, {@code e2e/target/mlpeer-<version>} otherwise
     * @throws IllegalArgumentException for {@link PeerKind#JAVA}
     * @throws IllegalStateException when Go or a module is unavailable, or the build fails
     */
    public static Path build(ProjectLayout layout, PeerKind kind) {
        return switch (kind) {
            case JAVA -> throw new IllegalArgumentException("JAVA is not a Go peer");
            case GO -> build(layout);
            case GO_054 -> buildModule(layout, kind, "v054.mod");
            case GO_LATEST -> buildModule(layout, kind, "go.mod");
        };
    }

    private static synchronized Path buildModule(ProjectLayout layout, PeerKind kind, String modfile) {
        String go = Files.isExecutable(Path.of(GO_MODERN)) ? GO_MODERN : findGo();
        Path source = layout.e2eModule().resolve("go/src/mlpeer");
        Path target = layout.e2eTarget();
        Path binary = target.resolve("mlpeer-" + kind.memberlistVersion());
        try {
            Files.createDirectories(target.resolve("gocache"));
        } catch (IOException e) {
            throw new IllegalStateException("cannot create " + target + ": " + e.getMessage(), e);
        }
        String proxy = System.getenv().getOrDefault("GOPROXY", DEFAULT_PROXY);
        List<String> command = new ArrayList<>(List.of("env", "-C", source.toString(),
                "GO111MODULE=on",
                "GOFLAGS=-mod=readonly",
                "GOTOOLCHAIN=local",
                "GOPROXY=" + (proxy.isBlank() ? DEFAULT_PROXY : proxy),
                "GOCACHE=" + target.resolve("gocache"),
                go, "build", "-modfile=" + modfile, "-o"));
        long started = System.nanoTime();
        CommandResult result = buildInto(binary, command, ".");
        if (!result.ok()) {
            throw new IllegalStateException("go build of the memberlist " + kind.memberlistVersion()
                    + " peer failed (exit " + result.exitCode() + "):\n" + result.stderr().strip()
                    + "\nIt needs Go >= 1.21 (" + GO_MODERN + ") and, on a cold module cache, the module proxy "
                    + proxy);
        }
        LOG.info("event=go-peer-built binary={} memberlist={} millis={}", binary, kind.memberlistVersion(),
                (System.nanoTime() - started) / 1_000_000);
        return binary;
    }

    /**
     * Builds (or incrementally rebuilds) the peer binary.
     *
     * @return {@code e2e/target/mlpeer}
     * @throws IllegalStateException when Go or Debian's memberlist package is missing, or the build fails
     */
    public static Path build(ProjectLayout layout) {
        return build(layout, DEBIAN_GOCODE);
    }

    /** Builds against the Go packages under {@code gocode} (a GOPATH tree such as Debian's /usr/share/gocode). */
    static synchronized Path build(ProjectLayout layout, Path gocode) {
        String go = findGo();
        if (!Files.isDirectory(gocode.resolve("src/github.com/hashicorp/memberlist"))) {
            throw new IllegalStateException("Debian's hashicorp/memberlist 0.2.2 is not installed under "
                    + gocode + "; " + INSTALL_HINT);
        }
        // e2e/go is a GOPATH workspace holding package mlpeer; Debian's gocode supplies memberlist and its deps
        Path workspace = layout.e2eModule().resolve("go");
        Path target = layout.e2eTarget();
        Path binary = target.resolve("mlpeer");
        try {
            Files.createDirectories(target.resolve("gocache"));
        } catch (IOException e) {
            throw new IllegalStateException("cannot create " + target + ": " + e.getMessage(), e);
        }
        List<String> command = new ArrayList<>(List.of("env",
                "GO111MODULE=off",
                "GOPROXY=off",
                "GOFLAGS=",
                "GOPATH=" + workspace + ":" + gocode,
                "GOCACHE=" + target.resolve("gocache"),
                go, "build", "-tags", "memberlist022", "-o"));
        long started = System.nanoTime();
        CommandResult result = buildInto(binary, command, "mlpeer");
        if (!result.ok()) {
            throw new IllegalStateException("go build of the memberlist 0.2.2 peer failed (exit " + result.exitCode()
                    + "):\n" + result.stderr().strip() + "\nIf a package is missing, " + INSTALL_HINT);
        }
        LOG.info("event=go-peer-built binary={} millis={}", binary, (System.nanoTime() - started) / 1_000_000);
        return binary;
    }

    /**
     * Runs {@code command} followed by an output file and {@code pkg}, so that it builds {@code binary}. Failsafe
     * runs the ITs in several JVMs: the build holds a file lock against the other JVMs' builds and writes a temporary
     * file that is renamed over {@code binary}, so a peer another JVM is running keeps its (identical) old file and
     * nobody ever executes a half-written one.
     */
    private static CommandResult buildInto(Path binary, List<String> command, String pkg) {
        Path temporary = binary.resolveSibling(binary.getFileName() + ".tmp-" + ProcessHandle.current().pid());
        try (FileChannel lock = FileChannel.open(binary.resolveSibling(binary.getFileName() + ".lock"),
                StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock held = lock.lock()) {
            List<String> full = new ArrayList<>(command);
            full.add(temporary.toString());
            full.add(pkg);
            CommandResult result = HostCommand.run(full, Duration.ofMinutes(5));
            if (result.ok()) {
                Files.move(temporary, binary, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } else {
                Files.deleteIfExists(temporary);
            }
            return result;
        } catch (IOException e) {
            throw new IllegalStateException("cannot build " + binary + ": " + e.getMessage(), e);
        }
    }

    private static String findGo() {
        for (String candidate : List.of("/usr/bin/go", "/usr/lib/go/bin/go", "/usr/local/go/bin/go")) {
            if (Files.isExecutable(Path.of(candidate))) {
                return candidate;
            }
        }
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "go"))) {
                return Path.of(dir, "go").toString();
            }
        }
        throw new IllegalStateException("the Go toolchain (go) is not installed; " + INSTALL_HINT);
    }
}
