package dev.fencing.nodemanager.escalation;

import dev.fencing.api.fencing.v1alpha1.FenceMethod;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs fence agents as processes from one directory ({@code /usr/sbin} for Debian's {@code fence-agents}). The agent
 * name is checked against {@link FenceMethod#AGENT_PATTERN} again here, so nothing but a {@code fence_*} file of that
 * directory is ever executed, whatever reached the CRD.
 */
public final class ProcessFenceAgentRunner implements FenceAgentRunner {

    /** Most bytes of output kept (the tail). */
    static final int OUTPUT_LIMIT = 16 * 1024;
    private static final Duration KILL_WAIT = Duration.ofSeconds(5);

    private final Path directory;

    /** @param directory where the agents are, e.g. {@code /usr/sbin} */
    public ProcessFenceAgentRunner(Path directory) {
        this.directory = directory;
    }

    @Override
    public AgentOutcome run(String agent, Map<String, String> arguments, Duration timeout) {
        if (!agent.matches(FenceMethod.AGENT_PATTERN)) {
            return new AgentOutcome(null, "", "agent '" + agent + "' does not match " + FenceMethod.AGENT_PATTERN);
        }
        Path executable = directory.resolve(agent);
        if (!Files.isExecutable(executable)) {
            return new AgentOutcome(null, "", "fence agent " + executable + " is not installed or not executable "
                    + "(install Debian's fence-agents, or set --fence-agents-dir)");
        }
        Process process;
        try {
            process = new ProcessBuilder(executable.toString()).redirectErrorStream(true).start();
        } catch (IOException e) {
            return new AgentOutcome(null, "", "cannot start " + executable + ": " + e.getMessage());
        }
        OutputTail tail = new OutputTail(process.getInputStream());
        Thread reader = new Thread(tail, "fence-agent-output-" + agent);
        reader.setDaemon(true);
        reader.start();
        try (OutputStream stdin = process.getOutputStream()) {
            StringBuilder lines = new StringBuilder();
            arguments.forEach((k, v) -> lines.append(k).append('=').append(v).append('\n'));
            stdin.write(lines.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // The agent may exit before reading stdin (e.g. a usage error); its exit code and output still tell.
        }
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                killAndReap(process);
                reader.join(KILL_WAIT.toMillis());
                return new AgentOutcome(null, tail.text(), "timed out after " + timeout.toSeconds() + "s; killed");
            }
            reader.join(KILL_WAIT.toMillis());
            return new AgentOutcome(process.exitValue(), tail.text(), null);
        } catch (InterruptedException e) {
            // Reaped before returning, so a stopping controller leaves no agent behind that still runs; the
            // interrupt is kept for the caller.
            try {
                killAndReap(process);
            } catch (InterruptedException again) {
                // Stopping anyway: the kill was sent.
            }
            Thread.currentThread().interrupt();
            return new AgentOutcome(null, tail.text(), "interrupted (controller stopping); agent killed");
        }
    }

    /** Kills the agent and its children, then waits up to {@link #KILL_WAIT} for it (a kill is asynchronous). */
    private static void killAndReap(Process process) throws InterruptedException {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor(KILL_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Reads a process's output to its end, keeping the last {@link #OUTPUT_LIMIT} bytes. */
    private static final class OutputTail implements Runnable {
        private final InputStream in;
        private final byte[] ring = new byte[OUTPUT_LIMIT];
        private long total;

        OutputTail(InputStream in) {
            this.in = in;
        }

        @Override
        public void run() {
            byte[] buf = new byte[4096];
            try (in) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    synchronized (this) {
                        for (int i = 0; i < n; i++) {
                            ring[(int) (total++ % OUTPUT_LIMIT)] = buf[i];
                        }
                    }
                }
            } catch (IOException e) {
                // The process was killed; what was read so far is kept.
            }
        }

        synchronized String text() {
            if (total <= OUTPUT_LIMIT) {
                return new String(ring, 0, (int) total, StandardCharsets.UTF_8);
            }
            int start = (int) (total % OUTPUT_LIMIT);
            byte[] ordered = new byte[OUTPUT_LIMIT];
            System.arraycopy(ring, start, ordered, 0, OUTPUT_LIMIT - start);
            System.arraycopy(ring, 0, ordered, OUTPUT_LIMIT - start, start);
            return new String(ordered, StandardCharsets.UTF_8);
        }
    }
}
