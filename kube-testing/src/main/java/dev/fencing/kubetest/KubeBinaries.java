package dev.fencing.kubetest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where the control plane's binaries are: the directory {@code scripts/kube-binaries} builds (once) from the pinned
 * Go module {@code tools/kube}. Looked up, in order, from the system property {@value #PROPERTY}, the environment
 * variable {@value #ENV}, or by running the script (found by walking up from the working directory). A directory
 * without every binary is an error, never a reason to skip.
 */
public final class KubeBinaries {

    public static final String PROPERTY = "fencing.kube.bin";
    public static final String ENV = "FENCING_KUBE_BIN";
    static final List<String> REQUIRED = List.of("etcd", "kube-apiserver", "kube-controller-manager",
            "kube-scheduler");
    private static final long BUILD_TIMEOUT_MINUTES = 60;

    private KubeBinaries() {
    }

    /** @return the directory holding etcd, kube-apiserver, kube-controller-manager and kube-scheduler */
    public static synchronized Path locate() {
        String configured = System.getProperty(PROPERTY);
        if (configured == null || configured.isBlank()) {
            configured = System.getenv(ENV);
        }
        Path dir = configured == null || configured.isBlank() ? build() : Path.of(configured);
        for (String binary : REQUIRED) {
            if (!Files.isExecutable(dir.resolve(binary))) {
                throw new IllegalStateException(dir.resolve(binary) + " is missing or not executable; run "
                        + "scripts/kube-binaries (it builds etcd and Kubernetes from tools/kube) and point "
                        + PROPERTY + " or " + ENV + " at the directory it prints");
            }
        }
        return dir;
    }

    /** @return the path of {@code name} in the binaries directory, when it is there (optional tools) */
    public static java.util.Optional<Path> optional(String name) {
        Path path = locate().resolve(name);
        return Files.isExecutable(path) ? java.util.Optional.of(path) : java.util.Optional.empty();
    }

    private static Path build() {
        Path script = findScript();
        try {
            Path output = Files.createTempFile("kube-binaries-", ".log");
            try {
                Process process = new ProcessBuilder("bash", script.toString())
                        .redirectErrorStream(false)
                        .redirectError(ProcessBuilder.Redirect.INHERIT)
                        .redirectOutput(output.toFile())
                        .start();
                if (!process.waitFor(BUILD_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
                    process.destroyForcibly();
                    throw new IllegalStateException(script + " did not finish within " + BUILD_TIMEOUT_MINUTES
                            + " minutes");
                }
                String printed = Files.readString(output, StandardCharsets.UTF_8).strip();
                if (process.exitValue() != 0 || printed.isEmpty()) {
                    throw new IllegalStateException(script + " failed with exit code " + process.exitValue()
                            + " (its stderr is above in the test output)");
                }
                String[] lines = printed.split("\n");
                return Path.of(lines[lines.length - 1].strip());
            } finally {
                Files.deleteIfExists(output);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + script + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while building the Kubernetes binaries", e);
        }
    }

    private static Path findScript() {
        Path dir = Path.of("").toAbsolutePath();
        for (int i = 0; dir != null && i < 8; i++, dir = dir.getParent()) {
            Path script = dir.resolve("scripts").resolve("kube-binaries");
            if (Files.isRegularFile(script)) {
                return script;
            }
        }
        throw new IllegalStateException("no " + PROPERTY + " / " + ENV + " set and no scripts/kube-binaries above "
                + Path.of("").toAbsolutePath() + "; run scripts/kube-binaries and set " + ENV);
    }
}
