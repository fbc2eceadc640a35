package dev.fencing.e2e.controlplane;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentLauncher;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.proto.fencing.v1.AgentStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;

/**
 * The former name of an {@link AgentCluster} configured by the controller, kept only so that
 * {@code ControlPlaneTieBreakIT} compiles while it is being rewritten; every call goes to {@link AgentCluster}.
 *
 * @deprecated use {@link ControlPlaneLab} or {@link AgentCluster#startConfiguredByController}
 */
@Deprecated
public final class ControlledAgents implements AutoCloseable {

    private final AgentCluster cluster;

    private ControlledAgents(AgentCluster cluster) {
        this.cluster = cluster;
    }

    /** @see AgentCluster#startConfiguredByController */
    public static ControlledAgents start(NetnsLab lab, ControlPlane controlPlane, AgentLauncher launcher,
                                         Duration watchdogTimeout, Path workDir, Path logDir) {
        return new ControlledAgents(AgentCluster.startConfiguredByController(lab, launcher,
                controlPlane.controllerAddress(), watchdogTimeout, workDir, logDir));
    }

    /** @see AgentCluster#node */
    public ControlledAgent agent(String node) {
        return new ControlledAgent(cluster.node(node));
    }

    /** @see AgentCluster#nodes */
    public List<ControlledAgent> all() {
        return cluster.nodes().stream().map(ControlledAgent::new).toList();
    }

    /** @see AgentCluster#awaitAllArmed */
    public long awaitAllArmed(Duration timeout) {
        return cluster.awaitAllArmed(timeout);
    }

    /** @see dev.fencing.e2e.agent.AgentNode#awaitStatus */
    public static AgentStatus awaitStatus(ControlledAgent agent, String what, Predicate<AgentStatus> condition,
                                          Duration timeout) {
        return agent.node().awaitStatus(what, condition, timeout);
    }

    @Override
    public void close() {
        cluster.close();
    }
}
