package dev.fencing.memberlist.codec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Builds and runs our Go golden program (src/test/go/golden) against Debian's memberlist 0.2.2 in GOPATH mode, and
 * (for {@link Build#V054} and {@link Build#LATEST}) with {@code -tags mlmodern} in module mode against the versions
 * pinned by {@code v054.mod} and {@code go.mod} (their go.sum files committed; {@code -mod=readonly}; modules from
 * the proxy into Go's module cache on the first build). The binaries and Go's build cache live under target/go, so
 * only the first run pays for compilation.
 */
final class GoPeer {
  /** The memberlist version a golden binary links. */
  enum Build {
    V022("golden", null),
    V054("golden-v0.5.4", "v054.mod"),
    LATEST("golden-v0.7.0", "go.mod");

    final String binaryName;
    final String modfile;

    Build(String binaryName, String modfile) {
      this.binaryName = binaryName;
      this.modfile = modfile;
    }
  }

  private static final Path SOURCE = Path.of("src/test/go/golden");
  private static final Path WORK = Path.of("target/go");
  private static final Path BINARY = WORK.resolve("golden");
  private static final String GOPATH_SYSTEM = "/usr/share/gocode";
  /** A Go new enough for the module builds: $FENCING_GO (scripts/test sets it from scripts/go-toolchain), else
   * the machine's /usr/local/go. */
  private static final String GO_MODERN = System.getenv().getOrDefault("FENCING_GO", "/usr/local/go/bin/go");
  private static final String MISSING =
      "the Go golden tests need Go and Debian's memberlist sources: scripts/test installs golang-go and "
          + "golang-github-hashicorp-memberlist-dev (apt-get install golang-go golang-github-hashicorp-memberlist-dev)";

  private static final java.util.EnumMap<Build, Path> BUILT = new java.util.EnumMap<>(Build.class);

  private GoPeer() {}

  /** Path of the 0.2.2 golden binary, building it if a source is newer. */
  static Path binary() {
    return binary(Build.V022);
  }

  /** Path of the golden binary of {@code build}, building it if a source is newer. */
  static synchronized Path binary(Build build) {
    Path built = BUILT.get(build);
    if (built != null) {
      return built;
    }
    if (build != Build.V022) {
      return buildModule(build);
    }
    try {
      if (!Files.isDirectory(Path.of(GOPATH_SYSTEM, "src/github.com/hashicorp/memberlist"))) {
        throw new AssertionError(MISSING + " (memberlist sources not found under " + GOPATH_SYSTEM + ")");
      }
      if (!upToDate()) {
        Files.createDirectories(WORK.resolve("cache"));
        Files.createDirectories(WORK.resolve("path"));
        List<String> cmd = List.of(goCommand(), "build", "-o", BINARY.toString(), "./" + SOURCE);
        Result r = run(cmd, null, 300);
        if (r.exit != 0) {
          throw new AssertionError("go build of the golden program failed:\n" + r.stderr);
        }
      }
      BUILT.put(build, BINARY);
      return BINARY;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path buildModule(Build build) {
    Path binary = WORK.resolve(build.binaryName);
    try {
      if (!upToDate(binary)) {
        Files.createDirectories(WORK.resolve("cache"));
        String go = Files.isExecutable(Path.of(GO_MODERN)) ? GO_MODERN : goCommand();
        List<String> cmd = List.of(go, "build", "-tags", "mlmodern", "-modfile=" + build.modfile, "-o",
            binary.toAbsolutePath().toString(), ".");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(SOURCE.toFile()).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        env.put("GO111MODULE", "on");
        env.put("GOFLAGS", "-mod=readonly");
        env.put("GOTOOLCHAIN", "local");
        env.putIfAbsent("GOPROXY", "https://proxy.golang.org");
        env.put("GOCACHE", WORK.resolve("cache").toAbsolutePath().toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0) {
          throw new AssertionError("go build of the " + build + " golden program failed (needs Go >= 1.21 at "
              + GO_MODERN + " and, on a cold module cache, the module proxy):\n" + out);
        }
      }
      BUILT.put(build, binary);
      return binary;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted building " + build, e);
    }
  }

  private static String goCommand() {
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
    throw new AssertionError(MISSING + " (no go binary on PATH)");
  }

  private static boolean upToDate() throws IOException {
    return upToDate(BINARY);
  }

  private static boolean upToDate(Path binary) throws IOException {
    if (!Files.isExecutable(binary)) {
      return false;
    }
    FileTime binTime = Files.getLastModifiedTime(binary);
    try (Stream<Path> files = Files.list(SOURCE)) {
      return files.noneMatch(f -> {
        try {
          return Files.getLastModifiedTime(f).compareTo(binTime) > 0;
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
  }

  /** Runs the 0.2.2 golden binary with {@code args}, feeding {@code stdin}; returns its stdout lines. */
  static List<String> run(String stdin, String... args) {
    return runBuild(Build.V022, stdin, args);
  }

  /** Runs the golden binary of {@code build} with {@code args}, feeding {@code stdin}; returns its stdout lines. */
  static List<String> runBuild(Build build, String stdin, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(binary(build).toAbsolutePath().toString());
    cmd.addAll(List.of(args));
    try {
      Result r = run(cmd, stdin, 60);
      if (r.exit != 0) {
        throw new AssertionError("golden " + String.join(" ", args) + " exited " + r.exit + ":\n" + r.stderr);
      }
      return r.stdout.lines().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Starts the golden binary as a long-running process (e.g. {@code serve}); stderr goes to a file under target/go.
   * The caller owns the process and must close its stdin and destroy it.
   */
  static Process start(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(binary().toAbsolutePath().toString());
    cmd.addAll(List.of(args));
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd);
      pb.redirectError(WORK.resolve("golden-" + args[0] + ".err").toFile());
      return pb.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private record Result(int exit, String stdout, String stderr) {}

  private static Result run(List<String> cmd, String stdin, int timeoutSeconds) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(cmd);
    Map<String, String> env = pb.environment();
    env.put("GO111MODULE", "off");
    env.put("GOPATH", GOPATH_SYSTEM + ":" + WORK.resolve("path").toAbsolutePath());
    env.put("GOCACHE", WORK.resolve("cache").toAbsolutePath().toString());
    env.put("GOFLAGS", "");
    Path out = Files.createTempFile("golden", ".out");
    Path err = Files.createTempFile("golden", ".err");
    try {
      pb.redirectOutput(out.toFile()).redirectError(err.toFile());
      Process p = pb.start();
      try (var in = p.getOutputStream()) {
        if (stdin != null) {
          in.write(stdin.getBytes(StandardCharsets.UTF_8));
        }
      }
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError(String.join(" ", cmd) + " did not finish within " + timeoutSeconds + " s");
      }
      return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while running " + cmd, e);
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }
}
