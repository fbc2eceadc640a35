package dev.fencing.e2e.agent;

import dev.fencing.e2e.netns.LabNode;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.process.ObservedLine;
import dev.fencing.proto.fencing.v1.AgentStatus;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fencing group of real agents on a {@link NetnsLab}: one agent, one emulated watchdog and one fencing.v1 consumer
 * per lab node, all configured standalone with the same expected list. The lab's teardown kills every process;
 * {@link #close()} also closes the consumers and removes the FIFOs and sockets.
 */
public final class AgentCluster implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AgentCluster.class);

    private final NetnsLab lab;
    private final AgentSettings settings;
    private final Path workDir;
    private final Map<String, AgentNode> nodes = new LinkedHashMap<>();

    private AgentCluster(NetnsLab lab, AgentSettings settings, Path workDir) {
        this.lab = lab;
        this.settings = settings;
        this.workDir = workDir;
    }

    /**
     * Writes every node's config, starts every emulated watchdog, then every agent and consumer.
     *
     * @param group   the NodeGroup name the agents gossip under
     * @param workDir parent of the per-node directories (FIFO, socket, disable file, state); removed on close
     */
    public static AgentCluster start(NetnsLab lab, AgentLauncher launcher, String group, AgentSettings settings, Path workDir,
                                     Path logDir) {
        AgentCluster cluster = new AgentCluster(lab, settings, workDir);
        try {
            List<AgentSettings.Member> members = lab.nodes().stream()
                    .map(n -> new AgentSettings.Member(n.name(), n.address(), AgentNode.GOSSIP_PORT)).toList();
            Path config = workDir.resolve("agent.yaml");
            Files.createDirectories(workDir);
            Files.writeString(config, settings.standaloneYaml(group, members), StandardCharsets.UTF_8);
            for (LabNode node : lab.nodes()) {
                Path dir = workDir.resolve(node.name());
                Files.createDirectories(dir.resolve("state"));
                cluster.nodes.put(node.name(), new AgentNode(lab, node, launcher, dir, config, logDir));
            }
        } catch (IOException e) {
            cluster.close();
            throw new IllegalStateException("cannot prepare " + workDir + ": " + e.getMessage(), e);
        }
        try {
            cluster.nodes.values().forEach(n -> n.startWatchdog(settings.watchdogTimeout()));
            cluster.nodes.values().forEach(AgentNode::startAgent);
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** @return the node called {@code name} */
    public AgentNode node(String name) {
        AgentNode node = nodes.get(name);
        if (node == null) {
            throw new IllegalArgumentException("no agent node " + name + "; nodes are " + nodes.keySet());
        }
        return node;
    }

    /** @return every node in lab order */
    public List<AgentNode> nodes() {
        return List.copyOf(nodes.values());
    }

    public NetnsLab lab() {
        return lab;
    }

    public AgentSettings settings() {
        return settings;
    }

    /**
     * Waits until every agent has armed its watchdog (the emulator saw the device opened and fed) and reports
     * quorum held.
     *
     * @return milliseconds until the last one was armed
     */
    public long awaitAllArmed(Duration timeout) {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        for (AgentNode node : nodes.values()) {
            while (true) {
                boolean armed = node.watchdog().last(l -> "armed".equals(l.text("event"))).isPresent();
                Optional<AgentStatus> status = armed ? node.consumer().status() : Optional.empty();
                if (status.isPresent() && status.get().getArmed() && status.get().getQuorumHeld()) {
                    break;
                }
                if (!node.agent().isAlive()) {
                    throw new IllegalStateException(node.name() + "'s agent exited before arming (exit "
                            + node.agent().awaitExit(Duration.ofSeconds(1)).map(String::valueOf).orElse("?")
                            + "):\n" + tail(node.agent().log(), 15));
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(node.name() + " not armed with quorum within " + timeout
                            + "; last status: " + status.map(AgentStatus::toString).orElse("no answer")
                            + "; log " + node.agent().log());
                }
                sleep(Duration.ofMillis(250));
            }
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    private static String tail(Path file, int lines) {
        try {
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e.getMessage() + ")";
        }
    }

    /**
     * @return the resolved timings as one agent reports them (T_stop, watchdog timeout, …)
     * @throws IllegalStateException when the agent does not answer
     */
    public dev.fencing.proto.fencing.v1.Timings timings(String node) {
        return node(node).consumer().status().orElseThrow(() ->
                new IllegalStateException(node + " did not answer GetStatus")).getTimings();
    }

    /** @return every reset recorded after {@code sinceNanos}, by node */
    public Map<String, List<ObservedLine>> resetsSince(long sinceNanos) {
        Map<String, List<ObservedLine>> resets = new LinkedHashMap<>();
        nodes.values().forEach(n -> resets.put(n.name(), n.resetsSince(sinceNanos)));
        return resets;
    }

    /** Boots the agent of a node again after its watchdog reset it (or after a crash). */
    public void reboot(String name) {
        AgentNode node = node(name);
        if (node.agent().isAlive()) {
            throw new IllegalStateException(name + "'s agent still runs; reboot only a reset or crashed node");
        }
        node.startAgent();
    }

    static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Closes the consumers and removes the work directory; processes die with the lab. */
    @Override
    public void close() {
        nodes.values().forEach(AgentNode::closeConsumer);
        if (Files.exists(workDir)) {
            try (Stream<Path> files = Files.walk(workDir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            } catch (IOException e) {
                LOG.warn("event=workdir-not-removed dir={} reason=\"{}\"", workDir, e.getMessage());
            }
        }
    }

    /** @return the names of the nodes, in lab order */
    public List<String> names() {
        return new ArrayList<>(nodes.keySet());
    }
}
