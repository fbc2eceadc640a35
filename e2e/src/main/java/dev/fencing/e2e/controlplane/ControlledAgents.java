package dev.fencing.e2e.controlplane;

import dev.fencing.e2e.agent.AgentLauncher;
import dev.fencing.e2e.netns.LabNode;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.proto.fencing.v1.AgentStatus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@link ControlledAgent} per lab node, all configured by the {@link ControlPlane}'s controller. Processes die
 * with the lab; {@link #close()} closes the consumers and removes the work directory.
 */
public final class ControlledAgents implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ControlledAgents.class);
    private static final Duration POLL = Duration.ofMillis(250);

    private final Path workDir;
    private final Map<String, ControlledAgent> agents = new LinkedHashMap<>();

    private ControlledAgents(Path workDir) {
        this.workDir = workDir;
    }

    /**
     * Starts every node's emulated watchdog ({@code watchdogTimeout}, which must match the NodeGroup's), then every
     * agent with {@code --controller} and no config file.
     */
    public static ControlledAgents start(NetnsLab lab, ControlPlane controlPlane, AgentLauncher launcher,
                                         Duration watchdogTimeout, Path workDir, Path logDir) {
        ControlledAgents all = new ControlledAgents(workDir);
        try {
            for (LabNode node : lab.nodes()) {
                Path dir = workDir.resolve(node.name());
                Files.createDirectories(dir.resolve("state"));
                all.agents.put(node.name(), new ControlledAgent(lab, node, launcher,
                        controlPlane.controllerAddress(), dir, logDir));
            }
            all.agents.values().forEach(a -> a.startWatchdog(watchdogTimeout));
            all.agents.values().forEach(ControlledAgent::boot);
        } catch (IOException e) {
            all.close();
            throw new IllegalStateException("cannot prepare " + workDir + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            all.close();
            throw e;
        }
        return all;
    }

    /** @return the agent of {@code node} */
    public ControlledAgent agent(String node) {
        ControlledAgent agent = agents.get(node);
        if (agent == null) {
            throw new IllegalArgumentException("no agent on " + node + "; nodes are " + agents.keySet());
        }
        return agent;
    }

    /** @return every agent in lab order */
    public List<ControlledAgent> all() {
        return List.copyOf(agents.values());
    }

    /**
     * Waits until every agent is armed (the emulator saw it) with quorum held, with a config from the controller.
     *
     * @return milliseconds until the last one was
     */
    public long awaitAllArmed(Duration timeout) {
        long start = System.nanoTime();
        for (ControlledAgent agent : agents.values()) {
            awaitStatus(agent, "armed with quorum", s -> s.getArmed() && s.getQuorumHeld()
                    && !agent.watchdogEvents("armed", 0).isEmpty(), timeout.minusNanos(System.nanoTime() - start));
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    /**
     * Polls {@code agent}'s status until {@code condition} holds.
     *
     * @return the matching status
     * @throws IllegalStateException on timeout, or when the agent exits meanwhile, with its last status
     */
    public static AgentStatus awaitStatus(ControlledAgent agent, String what, Predicate<AgentStatus> condition,
                                          Duration timeout) {
        long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
        Optional<AgentStatus> last = Optional.empty();
        while (true) {
            Optional<AgentStatus> status = agent.status();
            if (status.isPresent()) {
                last = status;
                if (condition.test(status.get())) {
                    return status.get();
                }
            }
            if (!agent.running()) {
                throw new IllegalStateException(agent.name() + "'s agent exited while waiting for " + what
                        + "; log " + agent.agent().log());
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(agent.name() + ": not " + what + " within " + timeout
                        + "; last status: " + last.map(AgentStatus::toString).orElse("no answer")
                        + "; log " + agent.agent().log());
            }
            try {
                Thread.sleep(POLL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for " + what, e);
            }
        }
    }

    @Override
    public void close() {
        agents.values().forEach(ControlledAgent::closeConsumer);
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
