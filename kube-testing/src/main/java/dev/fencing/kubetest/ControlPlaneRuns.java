package dev.fencing.kubetest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ownership of control-plane runs across JVMs, the same discipline as the netns lab: every run has a directory
 * {@code <root>/<runId>} holding its data, certificates and an {@code owner} file (pid and kernel start time of the
 * JVM that started it) plus a {@code pids} file (one {@code pid start-time} line per component). A run whose owner
 * is gone (kill -9 of the test JVM) is swept by the next start: its components are killed — only when their start
 * time still matches, so a reused pid is never hit — and its directory deleted. Runs of live JVMs are not touched.
 */
final class ControlPlaneRuns {

    private static final Logger LOG = LoggerFactory.getLogger(ControlPlaneRuns.class);
    /** tmpfs: etcd's data is throw-away and fsync-free there. */
    static final Path ROOT = Path.of(System.getProperty("fencing.kube.runs", "/dev/shm/fencing-kube"));

    private ControlPlaneRuns() {
    }

    /** Creates the run directory and records this JVM as its owner. */
    static Path claim(String runId) {
        long pid = ProcessHandle.current().pid();
        String start = ProcessStartTime.of(pid).orElseThrow(() -> new IllegalStateException("cannot read /proc/" + pid
                + "/stat"));
        Path dir = ROOT.resolve(runId);
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("owner"), pid + " " + start + "\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create the control plane's run directory " + dir + ": "
                    + e.getMessage(), e);
        }
        return dir;
    }

    /** Records a component so a sweeper can kill it if this JVM dies. */
    static synchronized void recordChild(Path runDir, long pid) {
        ProcessStartTime.of(pid).ifPresent(start -> {
            try {
                Files.writeString(runDir.resolve("pids"), pid + " " + start + "\n", StandardCharsets.UTF_8,
                        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
            } catch (IOException e) {
                LOG.warn("event=pid-not-recorded dir={} pid={} reason=\"{}\"", runDir, pid, e.getMessage());
            }
        });
    }

    /**
     * Kills the components and deletes the directories of every run whose owner JVM is gone.
     *
     * @return the run ids swept
     */
    static Set<String> sweepAbandoned() {
        Set<String> swept = new LinkedHashSet<>();
        if (!Files.isDirectory(ROOT)) {
            return swept;
        }
        try (Stream<Path> runs = Files.list(ROOT)) {
            for (Path run : runs.filter(Files::isDirectory).toList()) {
                if (!alive(run.resolve("owner"))) {
                    killRecorded(run);
                    delete(run);
                    swept.add(run.getFileName().toString());
                }
            }
        } catch (IOException e) {
            LOG.warn("event=runs-dir-unreadable dir={} reason=\"{}\"", ROOT, e.getMessage());
        }
        if (!swept.isEmpty()) {
            LOG.info("event=swept-abandoned-control-planes runs={}", swept);
        }
        return swept;
    }

    /** SIGKILLs every recorded component of {@code run} that still is the process it was. */
    static int killRecorded(Path run) {
        int killed = 0;
        for (String[] entry : entries(run.resolve("pids"))) {
            long pid = Long.parseLong(entry[0]);
            if (ProcessStartTime.of(pid).filter(entry[1]::equals).isPresent()) {
                Optional<ProcessHandle> handle = ProcessHandle.of(pid);
                if (handle.isPresent() && handle.get().destroyForcibly()) {
                    killed++;
                }
            }
        }
        return killed;
    }

    /** Removes a run's directory tree; an already removed one is fine. */
    static void delete(Path run) {
        if (!Files.exists(run)) {
            return;
        }
        try (Stream<Path> files = Files.walk(run)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            LOG.warn("event=run-dir-not-removed dir={} reason=\"{}\"", run, e.getMessage());
        }
    }

    private static boolean alive(Path ownerFile) {
        List<String[]> owner = entries(ownerFile);
        if (owner.isEmpty()) {
            // a run directory being created right now has no owner file for a moment: only sweep old ones
            try {
                return Files.getLastModifiedTime(ownerFile.getParent()).toMillis()
                        > System.currentTimeMillis() - 60_000;
            } catch (IOException e) {
                return false;
            }
        }
        String[] entry = owner.get(0);
        return ProcessStartTime.of(Long.parseLong(entry[0])).filter(entry[1]::equals).isPresent();
    }

    private static List<String[]> entries(Path file) {
        List<String[]> entries = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                String[] parts = line.strip().split(" ");
                if (parts.length == 2 && parts[0].matches("\\d{1,10}")) {
                    entries.add(parts);
                }
            }
        } catch (IOException e) {
            // no such file: nothing recorded
        }
        return entries;
    }
}
