package dev.fencing.e2e.controlplane;

import dev.fencing.e2e.agent.AgentLauncher;
import dev.fencing.e2e.agent.FencingConsumer;
import dev.fencing.e2e.netns.LabNode;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.process.JsonLinesProcess;
import dev.fencing.e2e.process.LoggedProcess;
import dev.fencing.e2e.process.ObservedLine;
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

/**
 * One lab node whose agent has no config file: {@code run --controller ADDR --node NAME}, so group, peers, policy
 * and signals all come from the node-manager controller. Beside it, a softdog emulator on a FIFO whose reset
 * SIGKILLs the agent (restarting the agent is the node's reboot), and a fencing.v1 consumer on its socket.
 */
public final class ControlledAgent {

    private static final int METRICS_PORT = 9464;
    private static final List<String> AGENT_JVM = List.of("-Xms16m", "-Xmx128m", "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1", "-Xss512k");
    private static final List<String> EMULATOR_JVM = List.of("-Xms8m", "-Xmx32m", "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1");

    private final NetnsLab lab;
    private final LabNode node;
    private final AgentLauncher launcher;
    private final String controllerAddress;
    private final Path dir;
    private final Path logDir;
    private JsonLinesProcess watchdog;
    private LoggedProcess agent;
    private FencingConsumer consumer;
    private int boots;

    ControlledAgent(NetnsLab lab, LabNode node, AgentLauncher launcher, String controllerAddress, Path dir,
                    Path logDir) {
        this.lab = lab;
        this.node = node;
        this.launcher = launcher;
        this.controllerAddress = controllerAddress;
        this.dir = dir;
        this.logDir = logDir;
    }

    public String name() {
        return node.name();
    }

    /** @return the file whose existence disarms this node (bashible's maintenance switch) */
    public Path disableFile() {
        return dir.resolve("disable");
    }

    private Path fifo() {
        return dir.resolve("watchdog");
    }

    private Path pidFile() {
        return dir.resolve("agent.pid");
    }

    /** Starts the emulated watchdog; its reset kills whatever agent the pid file names. */
    void startWatchdog(Duration timeout) {
        List<String> command = new ArrayList<>(List.of(java()));
        command.addAll(EMULATOR_JVM);
        command.addAll(launcher.softdogEmulator());
        command.addAll(List.of("--fifo", fifo().toString(),
                "--timeout", timeout.toMillis() + "ms",
                "--reset-command", "kill -9 $(cat " + pidFile() + ")",
                "--events-file", logDir.resolve("watchdog-" + node.name() + ".jsonl").toString()));
        watchdog = lab.start(node.name(), "watchdog-" + node.name(), command, logDir);
        watchdog.await("watchdog emulator of " + node.name() + " started",
                l -> "started".equals(l.text("event")), Duration.ofSeconds(30));
    }

    /** Boots the agent: the first start, or a "reboot" after its watchdog reset it. */
    public void boot() {
        if (agent != null && agent.isAlive()) {
            throw new IllegalStateException(node.name() + "'s agent still runs; boot only a reset or crashed node");
        }
        boots++;
        List<String> command = new ArrayList<>(List.of(java()));
        command.addAll(AGENT_JVM);
        command.addAll(launcher.agentCli());
        command.addAll(List.of("run",
                "--controller", controllerAddress,
                "--node", node.name(),
                "--socket", dir.resolve("agent.sock").toString(),
                "--watchdog-device", fifo().toString(),
                "--disable-file", disableFile().toString(),
                "--state-dir", dir.resolve("state").toString(),
                "--metrics-port", String.valueOf(METRICS_PORT)));
        agent = lab.startLogged(node.name(), "agent-" + node.name() + "-boot" + boots, command, logDir);
        writePidFile(agent.pid());
        if (consumer == null) {
            consumer = FencingConsumer.start(node.name(), dir.resolve("agent.sock"));
        }
    }

    private void writePidFile(long pid) {
        try {
            Path tmp = dir.resolve("agent.pid.tmp");
            Files.writeString(tmp, pid + "\n", StandardCharsets.UTF_8);
            Files.move(tmp, pidFile(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + pidFile() + ": " + e.getMessage(), e);
        }
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** @return the agent's status over its socket, or empty when it does not answer (reset, booting) */
    public Optional<AgentStatus> status() {
        return consumer.status();
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
