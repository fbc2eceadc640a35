package dev.fencing.e2e.agent;

import dev.fencing.e2e.netns.LabNode;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.process.JsonLinesProcess;
import dev.fencing.e2e.process.LoggedProcess;
import dev.fencing.e2e.process.ObservedLine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One lab node running the real agent: the agent process in the node's namespace, a softdog emulator on a FIFO
 * whose reset kills that agent (the node "reboots" when the harness restarts it), and a fencing.v1 consumer.
 */
public final class AgentNode {

    static final int GOSSIP_PORT = 7946;
    static final int METRICS_PORT = 9464;
    private static final List<String> JVM = List.of("-Xms16m", "-Xmx128m", "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1", "-Xss512k");

    private final NetnsLab lab;
    private final LabNode node;
    private final AgentLauncher launcher;
    private final Path dir;
    private final Path configFile;
    private final Path logDir;
    private JsonLinesProcess watchdog;
    private LoggedProcess agent;
    private FencingConsumer consumer;
    private int boots;

    AgentNode(NetnsLab lab, LabNode node, AgentLauncher launcher, Path dir, Path configFile, Path logDir) {
        this.lab = lab;
        this.node = node;
        this.launcher = launcher;
        this.dir = dir;
        this.configFile = configFile;
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

    public Path disableFile() {
        return dir.resolve("disable");
    }

    public Path fifo() {
        return dir.resolve("watchdog");
    }

    private Path pidFile() {
        return dir.resolve("agent.pid");
    }

    /** Starts the softdog emulator whose reset SIGKILLs whatever agent pid the pid file names. */
    void startWatchdog(Duration timeout) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xms8m", "-Xmx32m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1"));
        command.addAll(launcher.softdogEmulator());
        command.addAll(List.of("--fifo", fifo().toString(),
                "--timeout", timeout.toMillis() + "ms",
                "--reset-command", "kill -9 $(cat " + pidFile() + ")",
                "--events-file", logDir.resolve("watchdog-" + node.name() + ".jsonl").toString()));
        watchdog = lab.start(node.name(), "watchdog-" + node.name(), command, logDir);
        watchdog.await("watchdog emulator started", line -> "started".equals(line.text("event")),
                Duration.ofSeconds(30));
    }

    /** Starts (or, after a reset, restarts: a reboot) the agent and its consumer. */
    void startAgent() {
        boots++;
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(JVM);
        command.addAll(launcher.agentCli());
        command.addAll(List.of("run",
                "--config", configFile.toString(),
                "--node", node.name(),
                "--socket", socket().toString(),
                "--watchdog-device", fifo().toString(),
                "--disable-file", disableFile().toString(),
                "--state-dir", dir.resolve("state").toString(),
                "--metrics-port", String.valueOf(METRICS_PORT)));
        agent = lab.startLogged(node.name(), "agent-" + node.name() + "-boot" + boots, command, logDir);
        writePidFile(agent.pid());
        if (consumer == null) {
            consumer = FencingConsumer.start(node.name(), socket());
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

    /** @return the running agent process of the current boot */
    public LoggedProcess agent() {
        return agent;
    }

    /** @return the emulated watchdog's event lines */
    public JsonLinesProcess watchdog() {
        return watchdog;
    }

    /** @return this node's fencing.v1 consumer */
    public FencingConsumer consumer() {
        return consumer;
    }

    /** @return the watchdog resets recorded after {@code sinceNanos} */
    public List<ObservedLine> resetsSince(long sinceNanos) {
        return watchdog.lines().stream()
                .filter(l -> l.receivedNanos() >= sinceNanos && "reset".equals(l.text("event"))).toList();
    }

    /** @return how many times the agent was started */
    public int boots() {
        return boots;
    }

    void closeConsumer() {
        if (consumer != null) {
            consumer.close();
        }
    }
}
