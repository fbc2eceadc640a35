package dev.fencing.e2e.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A child process whose stdout and stderr both go to one log file (an agent, a controller). */
public final class LoggedProcess implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LoggedProcess.class);

    private final String name;
    private final Process process;
    private final Path log;

    private LoggedProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /**
     * Starts {@code command} with its output appended to {@code logDir/<name>.log}.
     *
     * @throws IllegalStateException when it cannot be started
     */
    public static LoggedProcess start(String name, List<String> command, Path logDir) {
        try {
            Files.createDirectories(logDir);
            Path log = logDir.resolve(name + ".log");
            Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .start();
            LOG.info("event=process-started process={} pid={} log={}", name, process.pid(), log);
            return new LoggedProcess(name, process, log);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + name + ": " + e.getMessage(), e);
        }
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    /** @return the file holding its output */
    public Path log() {
        return log;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Sends a signal by name (STOP, CONT, TERM, KILL). */
    public void signal(String signal) {
        HostCommand.check(List.of("kill", "-" + signal, String.valueOf(process.pid())), Duration.ofSeconds(5));
        LOG.info("event=signal process={} pid={} signal={}", name, process.pid(), signal);
    }

    /** Waits for the exit, returning its code, or empty after {@code timeout}. */
    public Optional<Integer> awaitExit(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    ? Optional.of(process.exitValue()) : Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** SIGTERM, then SIGKILL after {@code grace}; returns the exit code or -1 when killed. */
    public int terminate(Duration grace) {
        process.toHandle().destroy();
        Optional<Integer> code = awaitExit(grace);
        if (code.isPresent()) {
            return code.get();
        }
        kill();
        return -1;
    }

    /** SIGKILL and wait. */
    public void kill() {
        process.destroyForcibly();
        awaitExit(Duration.ofSeconds(10));
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            kill();
        }
    }
}
