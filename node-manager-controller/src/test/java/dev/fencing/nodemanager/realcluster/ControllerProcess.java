package dev.fencing.nodemanager.realcluster;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The controller's main ({@code NodeManagerOperator}) in a child JVM, as e2e runs the jar: the surefire test class
 * path stands in for the shaded jar, which is built only after the unit tests. Output goes to a log file the test
 * reads. {@link #kill()} is a SIGKILL: no shutdown hook runs, the Lease is not released.
 */
final class ControllerProcess implements AutoCloseable {

    private static final String MAIN = "dev.fencing.nodemanager.NodeManagerOperator";
    private static final Pattern GRPC_PORT = Pattern.compile("\\bgrpc_port=(\\d+)");

    private final String name;
    private final Process process;
    private final Path log;
    private volatile int grpcPort = -1;

    private ControllerProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /**
     * Starts {@code NodeManagerOperator args --grpc-port 0 --health-port 0 --probe-port 0}: each listener binds a free
     * port itself (a port picked here and closed for the child to bind could be taken in between), and
     * {@link #grpcPort()} reads the bound one from the replica's {@code event=started} line.
     */
    static ControllerProcess start(String name, Path logDir, List<String> args) throws IOException {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-cp", classPath, MAIN,
                // info: the test reads the controller's event lines (the test resources say warn)
                "--log-level", "info,io.fabric8=warn,io.javaoperatorsdk=warn"));
        command.addAll(args);
        // several replicas on one host: every listener takes any free port
        command.addAll(List.of("--grpc-port", "0", "--health-port", "0", "--probe-port", "0"));
        Files.createDirectories(logDir);
        Path log = logDir.resolve(name + ".log");
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        return new ControllerProcess(name, process, log);
    }

    String name() {
        return name;
    }

    /** The AgentControl port the replica bound, from its {@code event=started} line (waiting up to 120 s for it). */
    int grpcPort() {
        int port = grpcPort;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (port < 0) {
            for (String line : logLinesWith("event=started ")) {
                Matcher m = GRPC_PORT.matcher(line);
                if (m.find()) {
                    port = Integer.parseInt(m.group(1));
                    grpcPort = port;
                }
            }
            if (port >= 0) {
                break;
            }
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException(name + " never logged event=started" + (process.isAlive() ? ""
                        : " (exited " + process.exitValue() + ")") + "; log " + log);
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + name + " to start", e);
            }
        }
        return port;
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
        return name + " (pid " + process.pid() + ", grpc " + (grpcPort < 0 ? "not bound yet" : grpcPort) + ", log "
                + log + ")";
    }
}
