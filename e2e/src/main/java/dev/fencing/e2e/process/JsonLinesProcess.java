package dev.fencing.e2e.process;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A child process that prints one JSON object per line on stdout (the node jar, the Go peer, the UDP probe).
 * Every line is kept with its receive time; stderr goes to a log file so it never blocks the child.
 */
public final class JsonLinesProcess implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(JsonLinesProcess.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Bounds memory when a child floods stdout; tests look at far fewer lines. */
    private static final int MAX_KEPT_LINES = 200_000;

    private final String name;
    private final Process process;
    private final Path stderrLog;
    private final OutputStream stdin;
    private final Object lock = new Object();
    private final List<ObservedLine> lines = new ArrayList<>();
    private final Thread reader;
    private boolean eof;

    private JsonLinesProcess(String name, Process process, Path stderrLog) {
        this.name = name;
        this.process = process;
        this.stderrLog = stderrLog;
        this.stdin = process.getOutputStream();
        this.reader = new Thread(this::readStdout, "stdout-" + name);
        this.reader.setDaemon(true);
        this.reader.start();
    }

    /**
     * Starts {@code command}, writing its stderr to {@code logDir/<name>.err}.
     *
     * @throws IllegalStateException when the process cannot be started
     */
    public static JsonLinesProcess start(String name, List<String> command, Path logDir) {
        try {
            Files.createDirectories(logDir);
            Path err = logDir.resolve(name + ".err");
            Process process = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.to(err.toFile()))
                    .start();
            LOG.info("event=process-started process={} pid={} command=\"{}\"", name, process.pid(),
                    abbreviate(String.join(" ", command)));
            return new JsonLinesProcess(name, process, err);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + name + " (" + String.join(" ", command) + "): "
                    + e.getMessage(), e);
        }
    }

    /** Keeps logs readable: a child JVM's command line carries a classpath of several kilobytes. */
    private static String abbreviate(String command) {
        return command.length() <= 240 ? command : command.substring(0, 160) + " … "
                + command.substring(command.length() - 70);
    }

    private void readStdout() {
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                long nanos = System.nanoTime();
                long millis = System.currentTimeMillis();
                if (line.isBlank()) {
                    continue;
                }
                JsonNode json;
                try {
                    json = JSON.readTree(line);
                } catch (JsonProcessingException e) {
                    LOG.warn("event=non-json-stdout process={} line=\"{}\"", name, line);
                    continue;
                }
                if (json == null || !json.isObject()) {
                    LOG.warn("event=non-object-stdout process={} line=\"{}\"", name, line);
                    continue;
                }
                synchronized (lock) {
                    if (lines.size() < MAX_KEPT_LINES) {
                        lines.add(new ObservedLine(millis, nanos, json));
                    }
                    lock.notifyAll();
                }
            }
        } catch (IOException e) {
            LOG.debug("event=stdout-closed process={} reason=\"{}\"", name, e.getMessage());
        } finally {
            synchronized (lock) {
                eof = true;
                lock.notifyAll();
            }
        }
    }

    /** @return the name this process was started under (used in logs and file names) */
    public String name() {
        return name;
    }

    /** @return the operating-system process id */
    public long pid() {
        return process.pid();
    }

    /** @return the file receiving this process's stderr */
    public Path stderrLog() {
        return stderrLog;
    }

    /** @return true while the process runs */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** @return a snapshot of every JSON line read so far, in order */
    public List<ObservedLine> lines() {
        synchronized (lock) {
            return List.copyOf(lines);
        }
    }

    /** @return the most recent line matching {@code filter} */
    public Optional<ObservedLine> last(Predicate<ObservedLine> filter) {
        synchronized (lock) {
            for (int i = lines.size() - 1; i >= 0; i--) {
                if (filter.test(lines.get(i))) {
                    return Optional.of(lines.get(i));
                }
            }
            return Optional.empty();
        }
    }

    /** @return the first line matching {@code filter} */
    public Optional<ObservedLine> first(Predicate<ObservedLine> filter) {
        synchronized (lock) {
            return lines.stream().filter(filter).findFirst();
        }
    }

    /**
     * Waits until a line matching {@code filter} has been read (also one read before this call).
     *
     * @throws IllegalStateException on timeout or when stdout closes first; the message names the process
     */
    public ObservedLine await(String what, Predicate<ObservedLine> filter, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            int checked = 0;
            while (true) {
                for (; checked < lines.size(); checked++) {
                    if (filter.test(lines.get(checked))) {
                        return lines.get(checked);
                    }
                }
                long left = deadline - System.nanoTime();
                if (eof || left <= 0) {
                    throw new IllegalStateException(name + ": no " + what + " within " + timeout
                            + (eof ? " (stdout closed, exit " + exitCodeText() + ")" : "")
                            + "; stderr in " + stderrLog);
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(name + ": interrupted waiting for " + what, e);
                }
            }
        }
    }

    private String exitCodeText() {
        try {
            return process.waitFor(200, TimeUnit.MILLISECONDS) ? String.valueOf(process.exitValue()) : "running";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /** Writes one line to the child's stdin. */
    public void writeLine(String line) {
        try {
            synchronized (stdin) {
                stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                stdin.flush();
            }
        } catch (IOException e) {
            throw new IllegalStateException(name + ": cannot write to stdin: " + e.getMessage(), e);
        }
    }

    /** Sends a signal by name (STOP, CONT, TERM, KILL) through {@code kill}. */
    public void signal(String signal) {
        HostCommand.check(List.of("kill", "-" + signal, String.valueOf(process.pid())), Duration.ofSeconds(5));
        LOG.info("event=signal process={} pid={} signal={}", name, process.pid(), signal);
    }

    /** SIGKILL, then waits for the process to be gone. */
    public void kill() {
        process.destroyForcibly();
        awaitExit(Duration.ofSeconds(10));
    }

    /**
     * SIGTERM and wait up to {@code grace}; SIGKILL after that.
     *
     * @return the exit code, or -1 when the process had to be killed
     */
    public int terminate(Duration grace) {
        // Process.destroy() would also close our end of stdout, and the child's last lines (its goodbye) would
        // kill it with SIGPIPE; the handle only signals.
        process.toHandle().destroy();
        Optional<Integer> code = awaitExit(grace);
        if (code.isPresent()) {
            return code.get();
        }
        LOG.warn("event=terminate-timeout process={} grace={}", name, grace);
        kill();
        return -1;
    }

    /** Waits for the process to exit, returning its exit code, or empty after {@code timeout}. */
    public Optional<Integer> awaitExit(Duration timeout) {
        try {
            if (process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                reader.join(2_000);
                return Optional.of(process.exitValue());
            }
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** Kills the process if it still runs (SIGKILL also ends a stopped process). */
    @Override
    public void close() {
        if (process.isAlive()) {
            kill();
        }
    }
}
