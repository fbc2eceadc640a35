package dev.fencing.e2e.process;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs short host commands ({@code ip}, {@code nft}, {@code kill}, {@code go}) with a hard time limit, so a hung
 * tool can never hang a test run.
 */
public final class HostCommand {

    private HostCommand() {
    }

    /**
     * Runs a command and returns its result whatever the exit code.
     *
     * @throws IllegalStateException when the command cannot be started or does not finish within the timeout
     */
    public static CommandResult run(List<String> command, Duration timeout) {
        return run(command, null, timeout);
    }

    /** Runs a command with text written to its stdin (may be null). */
    public static CommandResult run(List<String> command, String stdin, Duration timeout) {
        Process process;
        try {
            process = new ProcessBuilder(command).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + String.join(" ", command) + ": " + e.getMessage(), e);
        }
        CompletableFuture<String> out = drain(process.getInputStream());
        CompletableFuture<String> err = drain(process.getErrorStream());
        try {
            try (var in = process.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(
                        "command timed out after " + timeout + ": " + String.join(" ", command));
            }
            return new CommandResult(process.exitValue(),
                    out.get(5, TimeUnit.SECONDS), err.get(5, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + String.join(" ", command), e);
        } catch (IOException | ExecutionException | TimeoutException e) {
            process.destroyForcibly();
            throw new IllegalStateException("cannot collect output of " + String.join(" ", command), e);
        }
    }

    /**
     * Runs a command and fails unless it exits with status 0.
     *
     * @return its stdout
     */
    public static String check(List<String> command, Duration timeout) {
        return check(command, null, timeout);
    }

    /** Like {@link #check(List, Duration)} with stdin text. */
    public static String check(List<String> command, String stdin, Duration timeout) {
        CommandResult result = run(command, stdin, timeout);
        if (!result.ok()) {
            throw new IllegalStateException("command failed (exit " + result.exitCode() + "): "
                    + String.join(" ", command) + "\n" + result.stderr().strip());
        }
        return result.stdout();
    }

    private static CompletableFuture<String> drain(InputStream stream) {
        // A thread per stream: the common pool may have a single worker on small machines, and a blocked drain
        // of stdout must never keep stderr from being drained.
        CompletableFuture<String> result = new CompletableFuture<>();
        Thread drainer = new Thread(() -> {
            try (stream) {
                result.complete(new String(stream.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                result.completeExceptionally(new UncheckedIOException(e));
            }
        }, "host-command-drain");
        drainer.setDaemon(true);
        drainer.start();
        return result;
    }
}
