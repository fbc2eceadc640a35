package dev.fencing.e2e.agent;

import dev.fencing.e2e.netns.LabNode;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.process.ObservedLine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fencing group of real agents on a {@link NetnsLab}: one {@link AgentNode} (agent, emulated watchdog, fencing.v1
 * consumer) per lab node, all configured the same way: standalone with the same expected list
 * ({@link #start}), or by the node-manager controller ({@link #startConfiguredByController}). The lab's teardown
 * kills every process; {@link #close()} also closes the consumers and removes the FIFOs and sockets.
 */
public final class AgentCluster implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AgentCluster.class);

    private static final String CONFIG_FILE = "agent.yaml";

    private final Path workDir;
    private final Map<String, AgentNode> nodes = new LinkedHashMap<>();

    private AgentCluster(Path workDir) {
        this.workDir = workDir;
    }

    /**
     * Writes the standalone config every agent reads, starts every emulated watchdog, then every agent and consumer.
     *
     * @param group   the NodeGroup name the agents gossip under
     * @param workDir parent of the config and the per-node directories (FIFO, socket, disable file, state); removed
     *                on close
     */
    public static AgentCluster start(NetnsLab lab, AgentLauncher launcher, String group, AgentSettings settings,
                                     Path workDir, Path logDir) {
        return start(lab, launcher, group, settings, workDir, logDir, Set.of());
    }

    /**
     * Like {@link #start(NetnsLab, AgentLauncher, String, AgentSettings, Path, Path)}, but the nodes in
     * {@code runElsewhere} get no agent here although they are expected members: the caller runs theirs (e.g. from
     * the container image) with the same {@link #standaloneConfig()} and their directory {@code workDir/<node>}.
     */
    public static AgentCluster start(NetnsLab lab, AgentLauncher launcher, String group, AgentSettings settings,
                                     Path workDir, Path logDir, Set<String> runElsewhere) {
        return start(lab, launcher, group, settings, workDir, logDir, runElsewhere, UnaryOperator.identity());
    }

    /**
     * Like {@link #start(NetnsLab, AgentLauncher, String, AgentSettings, Path, Path, Set)}, with the standalone file
     * passed through {@code editConfig} before it is written (e.g. appending {@code "  gossipLabel: None\n"}, a
     * field of the {@code fencing:} block, which comes last).
     */
    public static AgentCluster start(NetnsLab lab, AgentLauncher launcher, String group, AgentSettings settings,
                                     Path workDir, Path logDir, Set<String> runElsewhere,
                                     UnaryOperator<String> editConfig) {
        List<AgentSettings.Member> members = lab.nodes().stream()
                .map(n -> new AgentSettings.Member(n.name(), n.address(), AgentNode.GOSSIP_PORT)).toList();
        return startWithFile(lab, launcher, editConfig.apply(settings.standaloneYaml(group, members)), settings,
                workDir, logDir, runElsewhere);
    }

    /**
     * Like {@link #start(NetnsLab, AgentLauncher, String, AgentSettings, Path, Path)}, with the group gossiping on
     * every network of the lab ({@code fencing.networks}, the gossip port on each) under {@code reachability}.
     */
    public static AgentCluster startOnEveryNetwork(NetnsLab lab, AgentLauncher launcher, String group,
                                                   AgentSettings settings, String reachability, Path workDir,
                                                   Path logDir) {
        List<String> networks = new java.util.ArrayList<>();
        for (int net = 0; net < lab.networks(); net++) {
            networks.add(lab.networkCidr(net));
        }
        List<AgentSettings.Member> members = lab.nodes().stream().map(n -> {
            Map<String, String> perNetwork = new LinkedHashMap<>();
            for (int net = 1; net < lab.networks(); net++) {
                perNetwork.put(lab.networkCidr(net), lab.address(n.name(), net) + ":" + AgentNode.GOSSIP_PORT);
            }
            return new AgentSettings.Member(n.name(), n.address(), AgentNode.GOSSIP_PORT, perNetwork);
        }).toList();
        return startWithFile(lab, launcher, settings.standaloneYaml(group, members, networks, reachability), settings,
                workDir, logDir, Set.of());
    }

    private static AgentCluster startWithFile(NetnsLab lab, AgentLauncher launcher, String yaml,
                                              AgentSettings settings, Path workDir, Path logDir,
                                              Set<String> runElsewhere) {
        Path config = workDir.resolve(CONFIG_FILE);
        try {
            Files.createDirectories(workDir);
            Files.writeString(config, yaml, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + config + ": " + e.getMessage(), e);
        }
        List<LabNode> here = lab.nodes().stream().filter(n -> !runElsewhere.contains(n.name())).toList();
        return start(lab, here, launcher, AgentConfigSource.standaloneFile(config), settings.watchdogTimeout(),
                workDir, logDir, Optional.empty());
    }

    /**
     * Starts every emulated watchdog and every node's kubelet (the {@code kubelet} companion, which hands each agent
     * its token), then every agent with {@code run --controller} and no config file, so group, peers, policy and
     * signals all come from the controller.
     *
     * @param controller        the controller's AgentControl server and how to reach it (TLS, token files)
     * @param kubelet           what runs beside each agent and dies with it on a reset (the kubelet stand-in)
     * @param watchdogTimeout   the emulated devices' timeout; must match the NodeGroup's
     */
    public static AgentCluster startConfiguredByController(NetnsLab lab, AgentLauncher launcher,
                                                           AgentConfigSource controller, NodeCompanion kubelet,
                                                           Duration watchdogTimeout, Path workDir, Path logDir) {
        return start(lab, lab.nodes(), launcher, controller, watchdogTimeout, workDir, logDir, Optional.of(kubelet));
    }

    private static AgentCluster start(NetnsLab lab, List<LabNode> agentNodes, AgentLauncher launcher,
                                      AgentConfigSource source, Duration watchdogTimeout, Path workDir, Path logDir,
                                      Optional<NodeCompanion> companion) {
        AgentCluster cluster = new AgentCluster(workDir);
        try {
            for (LabNode node : agentNodes) {
                Path dir = workDir.resolve(node.name());
                Files.createDirectories(dir.resolve("state"));
                cluster.nodes.put(node.name(), new AgentNode(lab, node, launcher, source, dir, logDir, companion));
            }
            // every emulator JVM starts at once, and the kubelets meanwhile: the waits overlap
            cluster.nodes.values().forEach(n -> n.startWatchdog(watchdogTimeout));
            // all kubelets first, so their nodes' pods are scheduled and their tokens issued in parallel
            cluster.nodes.values().forEach(AgentNode::startCompanion);
            cluster.nodes.values().forEach(AgentNode::awaitWatchdogStarted);
            cluster.nodes.values().forEach(AgentNode::boot);
        } catch (IOException e) {
            cluster.close();
            throw new IllegalStateException("cannot prepare " + workDir + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** @return the standalone config file every agent of {@link #start} reads ({@code workDir/agent.yaml}) */
    public Path standaloneConfig() {
        return workDir.resolve(CONFIG_FILE);
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

    /**
     * Waits until every agent has armed its watchdog (the emulator saw the device opened and fed) and reports
     * quorum held.
     *
     * @return milliseconds until the last one was armed
     */
    public long awaitAllArmed(Duration timeout) {
        long start = System.nanoTime();
        for (AgentNode node : nodes.values()) {
            node.awaitStatus("armed with quorum", s -> s.getArmed() && s.getQuorumHeld()
                    && !node.watchdogEvents("armed", 0).isEmpty(), timeout.minusNanos(System.nanoTime() - start));
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    /**
     * @return the resolved timings as one agent reports them (T_stop, watchdog timeout, …)
     * @throws IllegalStateException when the agent does not answer
     */
    public dev.fencing.proto.fencing.v1.Timings timings(String node) {
        return node(node).status().orElseThrow(() ->
                new IllegalStateException(node + " did not answer GetStatus")).getTimings();
    }

    /** @return every reset recorded after {@code sinceNanos}, by node */
    public Map<String, List<ObservedLine>> resetsSince(long sinceNanos) {
        Map<String, List<ObservedLine>> resets = new LinkedHashMap<>();
        nodes.values().forEach(n -> resets.put(n.name(), n.resetsSince(sinceNanos)));
        return resets;
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
}
