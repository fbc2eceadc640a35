package dev.fencing.e2e.netns;

import dev.fencing.e2e.process.CommandResult;
import dev.fencing.e2e.process.HostCommand;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ownership of lab namespaces across processes. Every lab's namespaces are named {@code fe2e-<runId>-…}, and an owner
 * file {@code /run/fencing-e2e/<runId>} records the JVM that created them (pid and kernel start time, so a reused pid
 * does not count). A lab whose owner is gone was aborted (kill -9, power loss of the JVM) and is swept: its
 * processes killed and its namespaces deleted. Labs of live JVMs — parallel runs — are never touched.
 */
public final class LabRuns {

    private static final Logger LOG = LoggerFactory.getLogger(LabRuns.class);
    /** Prefix of every namespace this harness creates. */
    public static final String PREFIX = "fe2e-";
    static final Path OWNERS = Path.of("/run/fencing-e2e");
    private static final Duration IP_TIMEOUT = Duration.ofSeconds(15);

    private LabRuns() {
    }

    /** Records the current JVM as the owner of {@code runId}; done before any namespace of the run exists. */
    static void claim(String runId) {
        long pid = ProcessHandle.current().pid();
        String start = startTime(pid).orElseThrow(() -> new IllegalStateException("cannot read /proc/" + pid + "/stat"));
        try {
            Files.createDirectories(OWNERS);
            Files.writeString(OWNERS.resolve(runId), pid + " " + start + "\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write the owner file of lab " + runId + " in " + OWNERS
                    + " (the harness needs root): " + e.getMessage(), e);
        }
    }

    /** Forgets the owner file of a torn-down run. */
    static void release(String runId) {
        try {
            Files.deleteIfExists(OWNERS.resolve(runId));
        } catch (IOException e) {
            LOG.warn("event=owner-file-not-removed run={} reason=\"{}\"", runId, e.getMessage());
        }
    }

    /** @return every network namespace whose name starts with {@code fe2e-} */
    public static List<String> labNamespaces() {
        String out = HostCommand.check(List.of("ip", "netns", "list"), IP_TIMEOUT);
        List<String> names = new ArrayList<>();
        for (String line : out.split("\n")) {
            String name = line.strip().split(" ")[0];
            if (name.startsWith(PREFIX)) {
                names.add(name);
            }
        }
        return names;
    }

    /** @return the namespaces belonging to {@code runId} */
    public static List<String> namespacesOf(String runId) {
        return labNamespaces().stream().filter(ns -> ns.startsWith(PREFIX + runId + "-")).toList();
    }

    /**
     * Deletes the namespaces (and kills the processes) of every run whose owner JVM is gone.
     *
     * @return the run ids swept
     */
    public static Set<String> sweepAbandoned() {
        Set<String> swept = new LinkedHashSet<>();
        for (String ns : labNamespaces()) {
            String runId = runIdOf(ns);
            if (!ownerAlive(runId)) {
                removeNamespace(ns);
                swept.add(runId);
            }
        }
        if (Files.isDirectory(OWNERS)) {
            try (Stream<Path> files = Files.list(OWNERS)) {
                for (Path file : files.toList()) {
                    String runId = file.getFileName().toString();
                    if (!ownerAlive(runId)) {
                        release(runId);
                        swept.add(runId);
                    }
                }
            } catch (IOException e) {
                LOG.warn("event=owner-dir-unreadable dir={} reason=\"{}\"", OWNERS, e.getMessage());
            }
        }
        if (!swept.isEmpty()) {
            LOG.info("event=swept-abandoned-labs runs={}", swept);
        }
        return swept;
    }

    /** Kills every process inside {@code ns} and deletes it; an already deleted namespace is fine. */
    static void removeNamespace(String ns) {
        killProcessesIn(ns);
        CommandResult result = HostCommand.run(List.of("ip", "netns", "del", ns), IP_TIMEOUT);
        if (!result.ok() && !result.stderr().contains("No such file")) {
            LOG.warn("event=netns-delete-failed netns={} stderr=\"{}\"", ns, result.stderr().strip());
        }
    }

    /** SIGKILLs every process whose network namespace is {@code ns}. */
    static int killProcessesIn(String ns) {
        CommandResult pids = HostCommand.run(List.of("ip", "netns", "pids", ns), IP_TIMEOUT);
        if (!pids.ok()) {
            return 0;
        }
        List<String> kill = new ArrayList<>(List.of("kill", "-KILL"));
        for (String pid : pids.stdout().split("\\s+")) {
            if (!pid.isBlank()) {
                kill.add(pid.strip());
            }
        }
        if (kill.size() == 2) {
            return 0;
        }
        HostCommand.run(kill, IP_TIMEOUT);
        return kill.size() - 2;
    }

    static String runIdOf(String namespace) {
        String rest = namespace.substring(PREFIX.length());
        int dash = rest.indexOf('-');
        return dash < 0 ? rest : rest.substring(0, dash);
    }

    static boolean ownerAlive(String runId) {
        Path file = OWNERS.resolve(runId);
        if (!Files.isRegularFile(file)) {
            return false;
        }
        try {
            String[] parts = Files.readString(file, StandardCharsets.UTF_8).strip().split(" ");
            long pid = Long.parseLong(parts[0]);
            return parts.length == 2 && startTime(pid).map(parts[1]::equals).orElse(false);
        } catch (IOException | NumberFormatException e) {
            return false;
        }
    }

    /** Kernel start time of a process, which tells a live owner from a reused pid. */
    static Optional<String> startTime(long pid) {
        return dev.fencing.kubetest.ProcessStartTime.of(pid);
    }
}
