package dev.fencing.e2e.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentNode;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.Pause;
import dev.fencing.e2e.process.ProcessStats;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.DisarmReason;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Agents in network namespaces started with {@code run --controller} and no config file, against the real controller
 * process and a real Kubernetes control plane in the lab's control-plane namespace: the DaemonSet controller and the
 * scheduler place an agent pod on every lab Node, each node's kubelet stand-in gets that pod's token, the agents get
 * their config from the controller and arm; a maintenance annotation disarms one without a reset; a stopped
 * controller leaves them fencing on the cached config, and a restarted one serves them again; removal from the group
 * disarms that node and shrinks the others' expected set without a quorum loss. Throughout, the API server shows
 * every Node Ready, none recorded fenced and none tainted out of service.
 */
class ControlPlaneIT {

    private static final List<String> NODES = List.of("node-1", "node-2", "node-3");
    private static final Duration ARM = Duration.ofSeconds(90);
    private static final Duration SIGNAL = Duration.ofSeconds(30);
    /** Process start-up, the emulator's check period and a loaded 2-core machine. */
    private static final Duration SLACK = Duration.ofSeconds(3);

    private ControlPlaneLab lab;
    private KubeNodeWatch kube;

    @AfterEach
    void tearDown() {
        if (kube != null) {
            kube.close();
        }
        if (lab != null) {
            lab.close();
        }
    }

    @Test
    void agentsConfiguredByTheControllerArmDisarmForMaintenanceOutliveTheControllerAndShrinkOnRemoval() {
        AgentSettings settings = AgentSettings.fastFence();
        long t0 = System.nanoTime();
        lab = ControlPlaneLab.start(NODES, "workers", settings, ProjectLayout.fromWorkingDirectory(), "controlplane");
        long labMillis = millisSince(t0);
        ControlPlane controlPlane = lab.controlPlane();
        AgentCluster agents = lab.agents();
        long armedMillis = agents.awaitAllArmed(ARM);
        kube = KubeNodeWatch.start(controlPlane);
        long watched = System.nanoTime();
        // the real DaemonSet controller made one agent pod per Node, the scheduler bound it, the node's kubelet
        // stand-in got its token (the agent is armed, so the controller's TokenReview accepted it) and reports it
        List<Pod> pods = controlPlane.kube().adminClient().pods().inNamespace(ControlPlane.CONTROLLER_NAMESPACE)
                .withLabel("app.kubernetes.io/name", "fencing-agent").list().getItems();
        assertThat(pods).extracting(p -> p.getSpec().getNodeName()).containsExactlyInAnyOrderElementsOf(NODES);
        assertThat(pods).extracting(p -> p.getStatus().getPhase()).containsOnly("Running");
        for (String name : NODES) {
            assertThat(controlPlane.readiness(name)).as(name + " Ready").isEqualTo("True");
        }
        for (AgentNode agent : agents.nodes()) {
            AgentStatus status = agent.status().orElseThrow();
            assertThat(status.getConfigSource()).as(agent.name() + " config source").isEqualTo("controller");
            assertThat(status.getGroup()).isEqualTo("workers");
            assertThat(status.getExpected()).isEqualTo(NODES.size());
            assertThat(status.getTimings().getWatchdogTimeout().getSeconds())
                    .isEqualTo(settings.watchdogTimeout().toSeconds());
        }

        // maintenance by annotation: the controller's signal disarms node-3 (magic close), and nothing resets it
        AgentNode node3 = agents.node("node-3");
        long maintenance = System.nanoTime();
        controlPlane.startMaintenance("node-3", "kernel upgrade");
        node3.awaitStatus("disarmed for maintenance", s -> !s.getArmed()
                && s.getDisarmReasonsList().stream().anyMatch(r -> r.getKind() == DisarmReason.Kind.KIND_MAINTENANCE),
                SIGNAL);
        long disarmMillis = millisSince(maintenance);
        Pause.sleep(settings.watchdogTimeout().plus(SLACK));
        assertThat(node3.watchdogEvents("disarmed", maintenance)).as("magic close on node-3").isNotEmpty();
        assertThat(node3.watchdogEvents("reset", 0)).as("resets of node-3 in maintenance").isEmpty();
        assertThat(node3.running()).isTrue();

        // controller stopped: every agent keeps running and the armed ones keep feeding on the cached config
        controlPlane.stopController();
        long stopped = System.nanoTime();
        Pause.sleep(settings.watchdogTimeout().multipliedBy(2));
        for (String name : List.of("node-1", "node-2")) {
            AgentNode agent = agents.node(name);
            AgentStatus status = agent.status().orElseThrow(() -> new AssertionError(name + " does not answer"));
            assertThat(status.getArmed()).as(name + " armed without controller").isTrue();
            assertThat(status.getQuorumHeld()).as(name + " quorum without controller").isTrue();
            assertThat(agent.watchdogEvents("feed", stopped + settings.watchdogTimeout().toNanos()))
                    .as(name + " feeds in the second watchdog period without controller").isNotEmpty();
        }
        assertThat(node3.status().orElseThrow().getArmed()).as("node-3 stays disarmed").isFalse();
        for (AgentNode agent : agents.nodes()) {
            assertThat(agent.watchdogEvents("reset", 0)).as("resets of " + agent.name()).isEmpty();
            assertThat(agent.running()).as(agent.name() + " running").isTrue();
        }

        // controller back: ending the maintenance reaches node-3 through the new controller, and it re-arms
        long restart = System.nanoTime();
        controlPlane.startController();
        controlPlane.endMaintenance("node-3");
        node3.awaitStatus("re-armed after maintenance", s -> s.getArmed() && s.getQuorumHeld(),
                ARM);
        long rearmMillis = millisSince(restart);
        for (AgentNode agent : agents.nodes()) {
            assertThat(agent.watchdogEvents("reset", 0)).as("resets of " + agent.name()).isEmpty();
        }

        // removal from the group: node-3 disarms (being removed), the others' expected set shrinks, quorum stays
        long removal = System.nanoTime();
        controlPlane.removeFromGroup("node-3");
        node3.awaitStatus("disarmed as being removed", s -> !s.getArmed()
                && s.getDisarmReasonsList().stream().anyMatch(r -> r.getKind() == DisarmReason.Kind.KIND_BEING_REMOVED),
                SIGNAL);
        for (String name : List.of("node-1", "node-2")) {
            agents.node(name).awaitStatus("expecting 2 members", s -> s.getExpected() == 2, SIGNAL);
        }
        long removalMillis = millisSince(removal);
        // the DaemonSet controller deletes node-3's agent pod; its kubelet finishes the deletion (no pod is left
        // Terminating), as a kubelet does once the container stopped
        Awaitility.await("node-3's agent pod gone").atMost(SIGNAL).pollInterval(Duration.ofMillis(250))
                .until(() -> controlPlane.kube().adminClient().pods().inNamespace(ControlPlane.CONTROLLER_NAMESPACE)
                        .withLabel("app.kubernetes.io/name", "fencing-agent").list().getItems().stream()
                        .noneMatch(p -> "node-3".equals(p.getSpec().getNodeName())));
        Pause.sleep(settings.watchdogTimeout().plus(SLACK));
        for (String name : List.of("node-1", "node-2")) {
            AgentStatus status = agents.node(name).status().orElseThrow();
            assertThat(status.getExpected()).as(name + " expected after removal").isEqualTo(2);
            assertThat(status.getQuorumHeld() && status.getArmed()).as(name + " armed with quorum").isTrue();
        }
        for (AgentNode agent : agents.nodes()) {
            assertThat(agent.watchdogEvents("reset", 0)).as("resets of " + agent.name()).isEmpty();
        }
        // nobody was reset, so Kubernetes saw every node Ready and nothing was recorded fenced or taken out of
        // service: not for the node in maintenance, not while the controller was down
        List<KubeNodeWatch.Snapshot> seen = kube.since(watched);
        assertThat(seen).as("API server looks").hasSizeGreaterThan(10);
        for (KubeNodeWatch.Snapshot look : seen) {
            for (String name : NODES) {
                assertThat(look.isReady(name)).as(name + " Ready in " + look).isTrue();
                assertThat(look.tainted(name, ControlPlane.OUT_OF_SERVICE_TAINT)).as(name + " out of service")
                        .isFalse();
            }
            assertThat(look.fenced()).as("fenced nodes").isEmpty();
        }

        // the kubelet stand-ins' footprint after the run (pid of `ip netns exec`, which execs the stand-in)
        for (AgentNode agent : agents.nodes()) {
            ProcessStats kubelet = ProcessStats.of(agent.companion().orElseThrow().pid());
            System.out.printf("kubelet-standin %s: RSS %d KiB, CPU %.2f s%n", agent.name(), kubelet.rssKib(),
                    kubelet.cpuSeconds());
        }
        System.out.printf("""
                ControlPlaneIT timings (3 nodes, watchdog %d s):
                  lab, control plane (API server, seed, controller), agents   %6d ms
                  agents configured by the controller and armed               %6d ms
                  maintenance annotation -> node-3 disarmed                  %6d ms
                  controller restart + end of maintenance -> node-3 re-armed %6d ms
                  removal from the group -> node-3 disarmed, others expect 2 %6d ms
                """, settings.watchdogTimeout().toSeconds(), labMillis, armedMillis, disarmMillis,
                rearmMillis, removalMillis);
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }
}
