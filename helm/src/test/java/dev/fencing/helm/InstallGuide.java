package dev.fencing.helm;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The shell blocks of {@code docs/install.md} that the guide marks for execution, and a runner that executes them
 * with bash as an operator would paste them. A block is marked by the HTML comment
 * {@code <!-- install-guide:run <path> <phase> -->} on the line right before its {@code ```sh} fence; the phases are
 * {@link Phase#SETUP} (before the controller runs), {@link Phase#VERIFY} (once it has done its work) and
 * {@link Phase#UNINSTALL}. Inside a block, blank lines and comment lines are skipped and a line ending in a backslash
 * continues on the next; every other line is one command, run as written.
 */
final class InstallGuide {

    /** When a marked block runs, relative to the controller the test starts. */
    enum Phase {
        SETUP, VERIFY, UNINSTALL
    }

    /** One marked block: the install path it belongs to, its phase, its line in the guide and its commands. */
    record Block(String path, Phase phase, int line, List<String> commands) {
    }

    private static final Pattern MARKER = Pattern.compile("^<!-- install-guide:run (\\S+) (\\S+) -->$");
    private static final String PAUSE = "@@install-guide:phase ";

    private InstallGuide() {
    }

    /** {@code docs/install.md} of this checkout (the surefire property {@code install.guide}). */
    static Path file() {
        String configured = System.getProperty("install.guide");
        if (configured == null || configured.isBlank()) {
            throw new IllegalStateException("system property install.guide (the path of docs/install.md) is not set");
        }
        return Path.of(configured);
    }

    /** The marked blocks of {@code markdown}, in document order; a marker without a shell block after it is an error. */
    static List<Block> blocks(String markdown) {
        String[] lines = markdown.split("\n", -1);
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (!line.startsWith("<!-- install-guide:")) {
                continue;
            }
            Matcher m = MARKER.matcher(line);
            if (!m.matches()) {
                throw new IllegalArgumentException("line " + (i + 1) + ": malformed marker '" + line
                        + "'; expected <!-- install-guide:run <path> setup|verify|uninstall -->");
            }
            Phase phase;
            try {
                phase = Phase.valueOf(m.group(2).toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("line " + (i + 1) + ": unknown phase '" + m.group(2)
                        + "'; expected setup, verify or uninstall", e);
            }
            if (i + 1 >= lines.length || !lines[i + 1].strip().equals("```sh")) {
                throw new IllegalArgumentException("line " + (i + 1) + ": the marker must be followed by a ```sh block");
            }
            List<String> commands = new ArrayList<>();
            StringBuilder pending = null;
            int j = i + 2;
            for (; j < lines.length && !lines[j].strip().equals("```"); j++) {
                String text = lines[j];
                if (pending == null && (text.isBlank() || text.strip().startsWith("#"))) {
                    continue;
                }
                pending = pending == null ? new StringBuilder(text) : pending.append('\n').append(text);
                if (!text.endsWith("\\")) {
                    commands.add(pending.toString());
                    pending = null;
                }
            }
            if (j >= lines.length || pending != null) {
                throw new IllegalArgumentException("line " + (i + 1) + ": the marked block does not end (no closing "
                        + "``` or a last line ending in a backslash)");
            }
            blocks.add(new Block(m.group(1), phase, i + 1, List.copyOf(commands)));
            i = j;
        }
        return List.copyOf(blocks);
    }

    /**
     * The bash script that runs the blocks of {@code path}, phase by phase (document order within a phase): each
     * command is printed as {@code $ command} and then run with its output on the same stream, stdin closed;
     * {@code set -euo pipefail}, so the first failing command (or an unset variable) ends the script. Between the
     * phases it prints a pause line and waits for {@code go} on its stdin.
     */
    static String script(List<Block> blocks, String path) {
        StringBuilder s = new StringBuilder("set -euo pipefail\n");
        for (Phase phase : Phase.values()) {
            s.append("printf '%s\\n' '").append(PAUSE).append(phase.name().toLowerCase(Locale.ROOT))
                    .append("@@'\n");
            s.append("read -r -t 300 reply && [ \"$reply\" = go ]\n");
            for (Block b : blocks) {
                if (b.path().equals(path) && b.phase() == phase) {
                    for (String command : b.commands()) {
                        s.append("printf '%s\\n' ").append(quote("$ " + command)).append('\n');
                        s.append("{\n").append(command).append("\n} </dev/null 2>&1\n");
                    }
                }
            }
        }
        return s.toString();
    }

    // single-quoted for bash: ' becomes '\''
    static String quote(String text) {
        return "'" + text.replace("'", "'\\''") + "'";
    }

    /** What a run printed (commands and their output, in order) and how bash ended. */
    record Transcript(List<String> lines, int exitCode) {

        String text() {
            return String.join("\n", lines);
        }
    }

    /**
     * Runs {@code script} with bash in {@code workDir} with exactly {@code env} as its environment, calling
     * {@code beforePhase} at each phase's pause; every line is also printed to stdout as it arrives. Ends bash when
     * the run takes longer than {@code timeout} (then the transcript's last line says so).
     */
    static Transcript run(String script, Path workDir, Map<String, String> env, Duration timeout,
                          Consumer<Phase> beforePhase) throws IOException, InterruptedException {
        Path file = Files.createTempFile("install-guide-", ".sh");
        try {
            Files.writeString(file, script, StandardCharsets.UTF_8);
            ProcessBuilder builder = new ProcessBuilder("bash", file.toString()).directory(workDir.toFile())
                    .redirectErrorStream(true);
            builder.environment().clear();
            builder.environment().putAll(env);
            Process bash = builder.start();
            try {
                return collect(bash, timeout, beforePhase);
            } finally {
                // a phase hook that threw: bash must not outlive the test
                if (bash.isAlive()) {
                    kill(bash);
                }
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static Transcript collect(Process bash, Duration timeout, Consumer<Phase> beforePhase)
            throws IOException, InterruptedException {
        BlockingQueue<String> output = new LinkedBlockingQueue<>();
        String end = "\u0000end";
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(bash.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    output.add(line);
                }
            } catch (IOException e) {
                output.add("[install-guide: reading bash's output failed: " + e.getMessage() + "]");
            } finally {
                output.add(end);
            }
        }, "install-guide-output");
        reader.setDaemon(true);
        reader.start();
        List<String> lines = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Writer stdin = new OutputStreamWriter(bash.getOutputStream(), StandardCharsets.UTF_8)) {
            while (true) {
                String line = output.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null) {
                    kill(bash);
                    lines.add("[install-guide: still running after " + timeout + "; ended]");
                    System.out.println(lines.get(lines.size() - 1));
                    return new Transcript(List.copyOf(lines), -1);
                }
                if (line.equals(end)) {
                    break;
                }
                if (line.startsWith(PAUSE) && line.endsWith("@@")) {
                    String phase = line.substring(PAUSE.length(), line.length() - 2);
                    beforePhase.accept(Phase.valueOf(phase.toUpperCase(Locale.ROOT)));
                    stdin.write("go\n");
                    stdin.flush();
                    continue;
                }
                lines.add(line);
                System.out.println(line);
            }
        }
        if (!bash.waitFor(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
            kill(bash);
            return new Transcript(List.copyOf(lines), -1);
        }
        return new Transcript(List.copyOf(lines), bash.exitValue());
    }

    // bash and whatever it started (a hanging kubectl must not outlive the test)
    private static void kill(Process bash) {
        bash.descendants().forEach(ProcessHandle::destroyForcibly);
        bash.destroyForcibly();
    }
}
