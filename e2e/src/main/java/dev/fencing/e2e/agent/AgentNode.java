package dev.fencing.e2e.agent;

import dev.fencing.e2e.netns.LabNode;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.process.JsonLinesProcess;
import dev.fencing.e2e.process.LoggedProcess;
import dev.fencing.e2e.process.ObservedLine;
import dev.fencing.e2e.process.Pause;
import dev.fencing.proto.fencing.v1.AgentStatus;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * One lab node running the real agent, configured by its {@link AgentConfigSource} (a standalone file or the
 * controller): the agent process in the node's namespace, a softdog emulator on a FIFO whose reset SIGKILLs that
 * agent and the node's {@link NodeCompanion} (its kubelet stand-in, when the lab has a control plane), so the node
 * "reboots" when the harness boots it again, and a fencing.v1 consumer on its socket.
 */
public final class AgentNode {

    /** The gossip port every lab agent binds (on its own namespace's address). */
    public static final int GOSSIP_PORT = 7946;
    /** The metrics port every lab agent serves. */
    public static final int METRICS_PORT = 9464;
    /** JVM flags of the softdog emulators. */
    public static final List<String> EMULATOR_JVM = List.of("-Xms8m", "-Xmx32m", "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1");
    private static final Duration POLL = Duration.ofMillis(250);
    /** The kubelet stand-in's first token needs the DaemonSet, the scheduler and a TokenRequest. */
    private static final Duration COMPANION_READY = Duration.ofSeconds(90);

    private final NetnsLab lab;
    private final LabNode node;
    private final AgentLauncher launcher;
    private final AgentConfigSource configSource;
    private final Path dir;
    private final Path logDir;
    private final Optional<NodeCompanion> companion;
    private LoggedProcess companionProcess;
    private int companionStarts;
    private JsonLinesProcess watchdog;
    private Duration watchdogTimeout;
    private int watchdogStarts;
    private LoggedProcess agent;
    private FencingConsumer consumer;
    private int boots;

    AgentNode(NetnsLab lab, LabNode node, AgentLauncher launcher, AgentConfigSource configSource, Path dir,
              Path logDir, Optional<NodeCompanion> companion) {
        this.lab = lab;
        this.companion = companion;
        this.node = node;
        this.launcher = launcher;
        this.configSource = configSource;
        this.dir = dir;
        this.logDir = logDir;
    }

    public String name() {
        return node.name();
    }

    public LabNode labNode() {
        return node;
    }

    public Path socket() {
        return dir.resolve("agent.sock");
    }

    /** @return the file whose existence disarms this node (bashible's maintenance switch) */
    public Path disableFile() {
        return dir.resolve("disable");
    }

    public Path fifo() {
        return dir.resolve("watchdog");
    }

    private Path pidFile() {
        return dir.resolve("agent.pid");
    }

    private Path companionPidFile() {
        return dir.resolve("companion.pid");
    }

    private Path watchdogPidFile() {
        return dir.resolve("watchdog.pid");
    }

    /**
     * Starts the softdog emulator whose reset SIGKILLs whatever agent pid the pid file names, and the companion
     * (kubelet) whose pid its own file names: a reset takes the whole node down.
     */
    void startWatchdog(Duration timeout) {
        watchdogTimeout = timeout;
        watchdogStarts++;
        String suffix = watchdogStarts == 1 ? "" : "-power" + watchdogStarts;
        List<String> command = new ArrayList<>(List.of(java()));
        command.addAll(EMULATOR_JVM);
        command.addAll(launcher.softdogEmulator());
        command.addAll(List.of("--fifo", fifo().toString(),
                "--timeout", timeout.toMillis() + "ms",
                "--reset-command", "kill -9 $(cat " + pidFile() + " " + companionPidFile() + " 2>/dev/null)",
                "--events-file", logDir.resolve("watchdog-" + node.name() + suffix + ".jsonl").toString()));
        watchdog = lab.start(node.name(), "watchdog-" + node.name() + suffix, command, logDir);
        writePidFile(watchdogPidFile(), watchdog.pid());
    }

    /** Waits until the emulator started by {@link #startWatchdog} says it runs. */
    void awaitWatchdogStarted() {
        watchdog.await("watchdog emulator of " + node.name() + " started",
                l -> "started".equals(l.text("event")), Duration.ofSeconds(30));
    }

    /**
     * Boots the agent: the first start, or a "reboot" after its watchdog reset it (or a crash). The consumer is
     * started once and resubscribes by itself.
     *
     * @throws IllegalStateException when the agent of the current boot still runs
     */
    public void boot() {
        if (running()) {
            throw new IllegalStateException(node.name() + "'s agent still runs; boot only a reset or crashed node");
        }
        startCompanion();
        companion.ifPresent(c -> c.awaitReady(node, companionProcess, COMPANION_READY));
        boots++;
        List<String> command = new ArrayList<>(List.of(java()));
        command.addAll(AgentLauncher.AGENT_JVM_OPTIONS);
        command.addAll(launcher.agentCli());
        command.add("run");
        command.addAll(configSource.runArgs(node.name()));
        command.addAll(List.of(
                "--node", node.name(),
                "--socket", socket().toString(),
                "--watchdog-device", fifo().toString(),
                "--disable-file", disableFile().toString(),
                "--state-dir", dir.resolve("state").toString(),
                "--metrics-port", String.valueOf(METRICS_PORT)));
        agent = lab.startLogged(node.name(), "agent-" + node.name() + "-boot" + boots, command, logDir);
        writePidFile(pidFile(), agent.pid());
        if (consumer == null) {
            consumer = FencingConsumer.start(node.name(), socket());
        }
    }

    /**
     * The node hangs: its agent, its companion (kubelet stand-in) and its emulated watchdog are stopped (SIGSTOP), so
     * nothing feeds, renews or resets: a hung host whose watchdog does not reset it. Only a power-off
     * ({@link #powerOffCommand()}) ends it.
     */
    public void freeze() {
        agent.signal("STOP");
        companion().ifPresent(c -> c.signal("STOP"));
        watchdog.signal("STOP");
    }

    /**
     * @return the shell command that powers this node off: SIGKILL to whatever agent, companion and watchdog emulator
     *     the node runs at that moment (their pid files), stopped or not; for a BMC's power-off hook
     */
    public String powerOffCommand() {
        return "kill -9 $(cat " + pidFile() + " " + companionPidFile() + " " + watchdogPidFile() + " 2>/dev/null)";
    }

    /** @return true while any of the node's processes (agent, companion, watchdog emulator) runs */
    public boolean anyProcessAlive() {
        return running() || watchdog.isAlive() || (companionProcess != null && companionProcess.isAlive());
    }

    /**
     * Powers the node on after a power-off killed its processes: a new watchdog emulator (same timeout, same FIFO),
     * then {@link #boot()} (companion, then agent). {@link #watchdog()} is the new emulator from then on.
     *
     * @throws IllegalStateException while any of the node's processes still runs
     */
    public void powerOn() {
        if (anyProcessAlive()) {
            throw new IllegalStateException(node.name() + " still runs processes; power it on only after a power-off");
        }
        startWatchdog(watchdogTimeout);
        awaitWatchdogStarted();
        boot();
    }

    /**
     * Starts the node's companion (kubelet stand-in) unless it runs: before the first boot, and again after a reset
     * killed it. Nothing without a companion.
     */
    void startCompanion() {
        if (companion.isEmpty() || (companionProcess != null && companionProcess.isAlive())) {
            return;
        }
        companionStarts++;
        companionProcess = companion.get().start(node);
        writePidFile(companionPidFile(), companionProcess.pid());
    }

    /** @return the companion (kubelet stand-in) process of the current boot, if this node has one */
    public Optional<LoggedProcess> companion() {
        return Optional.ofNullable(companionProcess);
    }

    /** @return how many times the companion was started */
    public int companionStarts() {
        return companionStarts;
    }

    private void writePidFile(Path file, long pid) {
        try {
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.writeString(tmp, pid + "\n", StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** @return the agent's status over its socket, or empty when it does not answer (reset, booting) */
    public Optional<AgentStatus> status() {
        return consumer.status();
    }

    /**
     * Polls this agent's status until {@code condition} holds.
     *
     * @return the matching status
     * @throws IllegalStateException on timeout, or when the agent exits meanwhile, with its last status and log
     */
    public AgentStatus awaitStatus(String what, Predicate<AgentStatus> condition, Duration timeout) {
        long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
        Optional<AgentStatus> last = Optional.empty();
        while (true) {
            Optional<AgentStatus> status = status();
            if (status.isPresent()) {
                last = status;
                if (condition.test(status.get())) {
                    return status.get();
                }
            }
            if (!running()) {
                throw new IllegalStateException(node.name() + "'s agent exited (exit "
                        + agent.awaitExit(Duration.ofSeconds(1)).map(String::valueOf).orElse("?")
                        + ") while waiting for " + what + "; log " + agent.log() + " ends:\n" + tail(agent.log(), 15));
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(node.name() + ": not " + what + " within " + timeout
                        + "; last status: " + last.map(AgentStatus::toString).orElse("no answer")
                        + "; log " + agent.log());
            }
            Pause.sleep(POLL);
        }
    }

    private static String tail(Path file, int lines) {
        try {
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e.getMessage() + ")";
        }
    }

    /** @return true while the agent process of the current boot runs */
    public boolean running() {
        return agent != null && agent.isAlive();
    }

    /** @return the agent process of the current boot */
    public LoggedProcess agent() {
        return agent;
    }

    /** @return the emulated watchdog's event lines (started, armed, feed, disarmed, reset, …) */
    public JsonLinesProcess watchdog() {
        return watchdog;
    }

    /** @return this node's fencing.v1 consumer */
    public FencingConsumer consumer() {
        return consumer;
    }

    /** @return watchdog events named {@code event} received after {@code sinceNanos} */
    public List<ObservedLine> watchdogEvents(String event, long sinceNanos) {
        return watchdog.lines().stream()
                .filter(l -> l.receivedNanos() >= sinceNanos && event.equals(l.text("event"))).toList();
    }

    /** @return the watchdog resets recorded after {@code sinceNanos} */
    public List<ObservedLine> resetsSince(long sinceNanos) {
        return watchdogEvents("reset", sinceNanos);
    }

    /** @return how many times the agent was booted */
    public int boots() {
        return boots;
    }

    void closeConsumer() {
        if (consumer != null) {
            consumer.close();
        }
    }
}
