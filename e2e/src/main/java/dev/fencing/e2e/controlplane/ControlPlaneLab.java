package dev.fencing.e2e.controlplane;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentLauncher;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.peer.ProjectLayout;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * A lab with its Kubernetes side: the {@link NetnsLab}, its {@link ControlPlane} (a real Kubernetes control plane and
 * the controller, seeded with {@code group} and the lab's Nodes) and on every node a kubelet stand-in and an agent
 * configured by the controller only.
 * Child-process logs go to {@code e2e/target/e2e-logs/<suite>/<runId>}, the agents' directories to
 * {@code e2e/target/<suite>-lab/<runId>}. {@link #close()} tears everything down, newest first.
 */
public final class ControlPlaneLab implements AutoCloseable {

    private final NetnsLab lab;
    private final Path logDir;
    private ControlPlane controlPlane;
    private AgentCluster agents;
    private boolean closed;

    private ControlPlaneLab(NetnsLab lab, Path logDir) {
        this.lab = lab;
        this.logDir = logDir;
    }

    /**
     * Creates the lab, starts the control plane with the NodeGroup policy from {@code settings}, then every agent
     * and its emulated watchdog; does not wait for them to arm.
     *
     * @throws IllegalStateException when a step fails; whatever was started is removed again
     */
    public static ControlPlaneLab start(List<String> nodes, String group, AgentSettings settings,
                                        ProjectLayout layout, String suite) {
        return start(nodes, Set.of(), group, settings, layout, suite);
    }

    /**
     * Like {@link #start(List, String, AgentSettings, ProjectLayout, String)}, but the Nodes in {@code outsideGroup}
     * start without the group label: their agents run and wait until {@link ControlPlane#addToGroup} puts them in.
     */
    public static ControlPlaneLab start(List<String> nodes, Set<String> outsideGroup, String group,
                                        AgentSettings settings, ProjectLayout layout, String suite) {
        return start(nodes, outsideGroup, group, settings, layout, suite, ControllerOptions.defaults());
    }

    /**
     * Like {@link #start(List, Set, String, AgentSettings, ProjectLayout, String)}, with the controller (the packaged
     * jar) run with {@code options}, e.g. power fencing.
     */
    public static ControlPlaneLab start(List<String> nodes, Set<String> outsideGroup, String group,
                                        AgentSettings settings, ProjectLayout layout, String suite,
                                        ControllerOptions options) {
        NetnsLab lab = NetnsLab.create(nodes);
        ControlPlaneLab started = new ControlPlaneLab(lab, layout.logDir(suite).resolve(lab.runId()));
        try {
            started.controlPlane = ControlPlane.start(lab, layout, group, settings, started.logDir, outsideGroup,
                    ControlPlane.jar(ControllerJar.locate(layout)), options);
            started.agents = AgentCluster.startConfiguredByController(lab, AgentLauncher.locate(layout),
                    started.controlPlane.agentSource(), started.controlPlane.kubelet(), settings.watchdogTimeout(),
                    layout.e2eTarget().resolve(suite + "-lab").resolve(lab.runId()), started.logDir);
        } catch (RuntimeException e) {
            started.close();
            throw e;
        }
        return started;
    }

    public NetnsLab lab() {
        return lab;
    }

    public ControlPlane controlPlane() {
        return controlPlane;
    }

    /** @return the agents, one per lab node, configured by the controller */
    public AgentCluster agents() {
        return agents;
    }

    /** @return where this run's child processes log */
    public Path logDir() {
        return logDir;
    }

    /** Closes the agents' consumers, the control plane and the lab; safe to call more than once. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (agents != null) {
            agents.close();
        }
        if (controlPlane != null) {
            controlPlane.close();
        }
        lab.close();
    }
}
