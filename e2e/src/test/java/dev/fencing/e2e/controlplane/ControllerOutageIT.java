package dev.fencing.e2e.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentNode;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.agent.ConsumedEvent;
import dev.fencing.e2e.netns.Fault;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.ObservedLine;
import dev.fencing.e2e.process.Pause;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.Timings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 6: "controller stopped for 2 minutes ⇒ agents keep fencing correctly on cached config; restart ⇒ they
 * resync". Three agents configured by the controller only; the controller is stopped for {@link #OUTAGE}. While it is
 * down, node-3 is isolated: it fences within {@code T_stop + watchdog timeout} (+ slack), node-1 and node-2 keep
 * quorum, keep feeding and report node-3 LEFT; healed and rebooted, node-3 comes back on the config cached in its
 * state dir ({@code config_source = cache}) and re-arms. After the restart every agent resyncs: it reconnects,
 * reports {@code config_source = controller} with a revision no older than before, and nobody else ever resets.
 * Kubernetes sees it as a cluster would, controller or not: node-3's kubelet died with the reset, so the node
 * lifecycle controller marks its Node Unknown and taints it unreachable; its reboot makes it Ready and untainted again
 * before the controller is back, and the restarted controller records nobody fenced.
 */
class ControllerOutageIT {

    private static final List<String> NODES = List.of("node-1", "node-2", "node-3");
    private static final List<String> KEEPERS = List.of("node-1", "node-2");
    private static final Duration ARM = Duration.ofSeconds(90);
    /** Issue 6: the controller is stopped for two minutes. */
    private static final Duration OUTAGE = Duration.ofSeconds(120);
    /** Process start-up, the emulator's check period and a loaded 2-core machine. */
    private static final Duration SLACK = Duration.ofSeconds(3);
    private static final Duration MEMBERSHIP = Duration.ofSeconds(60);
    /**
     * After two minutes of failed connects both backoffs are near their caps: the agent's own (30 s + jitter) and the
     * gRPC channel's reconnect backoff under it (grpc-java default: up to 120 s ± 20 %, during which calls fail fast
     * with UNAVAILABLE). One measured resync took 73 s; the bound covers the worst case of both.
     */
    private static final Duration RESYNC = Duration.ofSeconds(180);

    /** kube-controller-manager's node monitor grace period in the lab, its period, and a loaded machine. */
    private static final Duration NODE_LIFECYCLE = Duration.ofSeconds(60);

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
    void agentsFenceOnCachedConfigWhileTheControllerIsDownForTwoMinutesAndResyncAfterItsRestart() {
        AgentSettings settings = AgentSettings.fastFence();
        lab = ControlPlaneLab.start(NODES, "workers", settings, ProjectLayout.fromWorkingDirectory(),
                "controller-outage");
        ControlPlane controlPlane = lab.controlPlane();
        AgentCluster agents = lab.agents();
        long armedMillis = agents.awaitAllArmed(ARM);
        Timings timings = agents.timings("node-1");
        Duration tStop = Duration.ofSeconds(timings.getTStop().getSeconds(), timings.getTStop().getNanos());
        Duration watchdogTimeout = settings.watchdogTimeout();
        Duration bound = tStop.plus(watchdogTimeout).plus(SLACK);
        Map<String, Long> revisionBefore = new LinkedHashMap<>();
        Map<String, Integer> connectsBefore = new LinkedHashMap<>();
        for (AgentNode agent : agents.nodes()) {
            AgentStatus status = agent.status().orElseThrow();
            assertThat(status.getConfigSource()).as(agent.name() + " config source").isEqualTo("controller");
            revisionBefore.put(agent.name(), status.getConfigRevision());
        }
        kube = KubeNodeWatch.start(controlPlane);
        long start = System.nanoTime();

        // ---- the controller goes away for two minutes ----
        controlPlane.stopController();
        long stoppedAt = System.nanoTime();
        assertThat(controlPlane.controllerRunning()).as("controller stopped").isFalse();
        Pause.sleep(watchdogTimeout.plus(SLACK));
        for (AgentNode agent : agents.nodes()) {
            AgentStatus status = agent.status().orElseThrow(() -> new AssertionError(agent.name() + " silent"));
            assertThat(status.getArmed() && status.getQuorumHeld())
                    .as(agent.name() + " armed with quorum without controller").isTrue();
        }
        assertNoResets(agents, NODES, start);

        // isolate node-3 with the controller down: it must fence on the cached policy, the others must not
        AgentNode node3 = agents.node("node-3");
        long isolatedAt = System.nanoTime();
        Fault isolation = lab.lab().isolate("node-3");
        ObservedLine reset = node3.watchdog().await("node-3 watchdog reset", l -> l.receivedNanos() >= isolatedAt
                && "reset".equals(l.text("event")), bound.plus(Duration.ofSeconds(30)));
        long resetMillis = (reset.receivedNanos() - isolatedAt) / 1_000_000;
        assertThat(resetMillis).as("node-3 reset within T_stop + watchdog timeout + slack")
                .isLessThanOrEqualTo(bound.toMillis());
        Map<String, Long> leftMillis = new LinkedHashMap<>();
        for (String observer : KEEPERS) {
            ConsumedEvent left = agents.node(observer).consumer().await("LEFT of node-3", isolatedAt,
                    e -> e.isLiveLeftOf("node-3"), MEMBERSHIP);
            leftMillis.put(observer, (left.receivedNanos() - isolatedAt) / 1_000_000);
        }
        // Kubernetes' own view, without our controller: node-3's kubelet died with the reset, the Node goes Unknown
        // and the node lifecycle controller taints it unreachable; the keepers' kubelets keep them Ready
        long resetAt = reset.receivedNanos();
        KubeNodeWatch.Snapshot lost = kube.await("node-3 Unknown and tainted unreachable", resetAt,
                look -> "Unknown".equals(look.ready().get("node-3"))
                        && look.tainted("node-3", ControlPlane.UNREACHABLE_TAINT), NODE_LIFECYCLE);
        long lostMillis = (lost.nanos() - resetAt) / 1_000_000;
        for (String keeper : KEEPERS) {
            assertThat(lost.isReady(keeper)).as(keeper + " Ready while node-3 is lost").isTrue();
        }
        sleepUntil(isolatedAt + bound.plus(SLACK).toNanos());
        assertNoResets(agents, KEEPERS, start);
        assertFeeding(agents, KEEPERS, watchdogTimeout);
        for (String name : KEEPERS) {
            AgentStatus status = agents.node(name).status().orElseThrow();
            assertThat(status.getArmed() && status.getQuorumHeld()).as(name + " armed with quorum, node-3 gone")
                    .isTrue();
        }

        // heal and reboot node-3 while the controller is still down: it runs on the config cached in its state dir
        long healAt = System.nanoTime();
        isolation.heal();
        node3.boot();
        KubeNodeWatch.Snapshot back = kube.await("node-3 Ready and no longer tainted unreachable", healAt,
                look -> look.isReady("node-3") && !look.tainted("node-3", ControlPlane.UNREACHABLE_TAINT),
                NODE_LIFECYCLE);
        long backMillis = (back.nanos() - healAt) / 1_000_000;
        assertThat(node3.companionStarts()).as("node-3's kubelet started again by the reboot").isEqualTo(2);
        AgentStatus cached = node3.awaitStatus("re-armed on the cached config", s -> s.getArmed()
                && s.getQuorumHeld() && "cache".equals(s.getConfigSource()), ARM);
        long cacheRearmMillis = (System.nanoTime() - healAt) / 1_000_000;
        assertThat(cached.getExpected()).as("node-3 expected members from the cache").isEqualTo(NODES.size());
        Map<String, Long> joinMillis = new LinkedHashMap<>();
        for (String observer : KEEPERS) {
            ConsumedEvent join = agents.node(observer).consumer().await("JOIN of node-3", healAt,
                    e -> e.isJoinOf("node-3") && !"snapshot".equals(e.source()), MEMBERSHIP);
            joinMillis.put(observer, (join.receivedNanos() - healAt) / 1_000_000);
        }
        for (AgentNode agent : agents.nodes()) {
            connectsBefore.put(agent.name(), connects(agent));
        }

        // the rest of the two minutes: nobody resets, everybody keeps feeding
        sleepUntil(stoppedAt + OUTAGE.toNanos());
        long outageMillis = (System.nanoTime() - stoppedAt) / 1_000_000;
        assertThat(controlPlane.controllerRunning()).as("controller still stopped").isFalse();
        assertThat(outageMillis).as("outage length").isGreaterThanOrEqualTo(OUTAGE.toMillis());
        assertNoResets(agents, KEEPERS, start);
        assertNoResets(agents, List.of("node-3"), healAt);
        assertFeeding(agents, NODES, watchdogTimeout);

        // ---- the controller is back: every agent reconnects and runs on the controller's config again ----
        long restartAt = System.nanoTime();
        controlPlane.startController();
        Map<String, Long> resyncMillis = new LinkedHashMap<>();
        for (AgentNode agent : agents.nodes()) {
            long before = revisionBefore.get(agent.name());
            int connectsBeforeRestart = connectsBefore.get(agent.name());
            AgentStatus status = agent.awaitStatus("resynced with the restarted controller",
                    s -> "controller".equals(s.getConfigSource()) && s.getConfigRevision() >= before
                            && connects(agent) > connectsBeforeRestart, RESYNC);
            resyncMillis.put(agent.name(), (System.nanoTime() - restartAt) / 1_000_000);
            assertThat(status.getArmed() && status.getQuorumHeld()).as(agent.name() + " armed with quorum after resync")
                    .isTrue();
            assertThat(status.getExpected()).isEqualTo(NODES.size());
        }
        Pause.sleep(SLACK);
        assertNoResets(agents, KEEPERS, start);
        assertNoResets(agents, List.of("node-3"), healAt);
        assertFeeding(agents, NODES, watchdogTimeout);
        // the controller was down while node-3 fenced itself and came back before it returned: nobody is recorded
        // fenced or taken out of service, and every Node is Ready
        for (KubeNodeWatch.Snapshot look : kube.since(start)) {
            assertThat(look.fenced()).as("fenced nodes at " + look).isEmpty();
            NODES.forEach(n -> assertThat(look.tainted(n, ControlPlane.OUT_OF_SERVICE_TAINT))
                    .as(n + " out of service").isFalse());
        }
        for (String name : NODES) {
            assertThat(controlPlane.readiness(name)).as(name + " Ready at the end").isEqualTo("True");
        }

        StringBuilder out = new StringBuilder(String.format("""
                ControllerOutageIT timings (3 nodes, watchdog %d s, T_stop %d ms, controller down %d ms):
                  agents configured by the controller and armed              %6d ms
                  controller down, node-3 isolated -> node-3 reset           %6d ms  (bound %d ms)
                """, watchdogTimeout.toSeconds(), tStop.toMillis(), outageMillis, armedMillis, resetMillis,
                bound.toMillis()));
        leftMillis.forEach((n, ms) -> out.append(String.format(
                "  isolation -> LEFT node-3 at %s's consumer            %6d ms%n", n, ms)));
        out.append(String.format("  node-3 reset -> Node Unknown + unreachable taint (kcm)     %6d ms%n", lostMillis));
        out.append(String.format("  heal + reboot -> Node node-3 Ready, taint gone            %6d ms%n", backMillis));
        out.append(String.format("  heal + reboot -> node-3 re-armed on cached config (rev %d) %6d ms%n",
                cached.getConfigRevision(), cacheRearmMillis));
        joinMillis.forEach((n, ms) -> out.append(String.format(
                "  heal + reboot -> JOIN node-3 at %s's consumer        %6d ms%n", n, ms)));
        resyncMillis.forEach((n, ms) -> out.append(String.format(
                "  controller restart -> %s resynced (config_source=controller) %6d ms%n", n, ms)));
        out.append("  resets of node-1/node-2: 0; revisions before ").append(revisionBefore).append(", after ");
        Map<String, Long> after = new LinkedHashMap<>();
        agents.nodes().forEach(a -> after.put(a.name(), a.status().orElseThrow().getConfigRevision()));
        out.append(after).append('\n');
        System.out.print(out);
    }

    /** Sleeps until {@link System#nanoTime()} has reached {@code deadlineNanos}. */
    private static void sleepUntil(long deadlineNanos) {
        long left;
        while ((left = deadlineNanos - System.nanoTime()) > 0) {
            Pause.sleep(Duration.ofNanos(left).plusMillis(1));
        }
    }

    private static void assertNoResets(AgentCluster agents, List<String> nodes, long sinceNanos) {
        for (String name : nodes) {
            AgentNode agent = agents.node(name);
            assertThat(agent.watchdogEvents("reset", sinceNanos)).as("resets of " + name).isEmpty();
            assertThat(agent.running()).as(name + " running").isTrue();
        }
    }

    /** Every node in {@code nodes} feeds its watchdog again within one watchdog timeout from now. */
    private static void assertFeeding(AgentCluster agents, List<String> nodes, Duration watchdogTimeout) {
        long since = System.nanoTime();
        for (String name : nodes) {
            agents.node(name).watchdog().await(name + " fed", l -> l.receivedNanos() >= since
                    && "feed".equals(l.text("event")), watchdogTimeout);
        }
    }

    /** @return how often the current boot of {@code agent} connected to a controller (its log's event=connected) */
    private static int connects(AgentNode agent) {
        Path log = agent.agent().log();
        try {
            return (int) Files.readAllLines(log, StandardCharsets.UTF_8).stream()
                    .filter(l -> l.contains("event=connected")).count();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + log + ": " + e.getMessage(), e);
        }
    }
}
