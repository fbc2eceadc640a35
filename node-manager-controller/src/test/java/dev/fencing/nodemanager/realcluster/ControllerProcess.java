package dev.fencing.nodemanager.realcluster;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The controller's main ({@code NodeManagerOperator}) in a child JVM, as e2e runs the jar: the surefire test class
 * path stands in for the shaded jar, which is built only after the unit tests. Output goes to a log file the test
 * reads. {@link #kill()} is a SIGKILL: no shutdown hook runs, the Lease is not released.
 */
final class ControllerProcess implements AutoCloseable {

    private static final String MAIN = "dev.fencing.nodemanager.NodeManagerOperator";

    private final String name;
    private final Process process;
    private final Path log;
    private final int grpcPort;

    private ControllerProcess(String name, Process process, Path log, int grpcPort) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.grpcPort = grpcPort;
    }

    /** Starts {@code NodeManagerOperator args --grpc-port <free> --health-port <free> --probe-port 0}. */
    static ControllerProcess start(String name, Path logDir, List<String> args) throws IOException {
        int grpcPort = freePort();
        int healthPort = freePort();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-cp", classPath, MAIN,
                // info: the test reads the controller's event lines (the test resources say warn)
                "--log-level", "info,io.fabric8=warn,io.javaoperatorsdk=warn"));
        command.addAll(args);
        // several replicas on one host: the probe listener takes any free port, as the others do
        command.addAll(List.of("--grpc-port", Integer.toString(grpcPort), "--health-port",
                Integer.toString(healthPort), "--probe-port", "0"));
        Files.createDirectories(logDir);
        Path log = logDir.resolve(name + ".log");
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        return new ControllerProcess(name, process, log, grpcPort);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    String name() {
        return name;
    }

    int grpcPort() {
        return grpcPort;
    }

    boolean alive() {
        return process.isAlive();
    }

    /** The process's log lines so far. */
    List<String> logLines() {
        try {
            return Files.readAllLines(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Log lines containing {@code text}. */
    List<String> logLinesWith(String text) {
        return logLines().stream().filter(l -> l.contains(text)).toList();
    }

    /** SIGKILL, and waits until the process is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + " (pid " + process.pid() + ") survived SIGKILL for 10 s");
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + process.pid() + ", grpc " + grpcPort + ", log " + log + ")";
    }
}
