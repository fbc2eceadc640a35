package dev.fencing.e2e.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentNode;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.agent.ConsumedEvent;
import dev.fencing.e2e.controlplane.ControlPlane;
import dev.fencing.e2e.controlplane.ControlPlaneLab;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.Pause;
import dev.fencing.proto.fencing.v1.AgentStatus;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 9 item 3: a group under {@code profile: Auto} grows from 5 to 6 members and shrinks to 4. Every size change
 * moves the Auto-derived memberlist and quorum timings, and the agents must apply them to the running gossip and
 * quorum loop: no consumer may see a LEFT (or a fresh JOIN) for a node that stayed in the group, no agent of the group
 * may lose quorum, and nothing resets. Runs on the real controller and agents in network namespaces.
 */
class GroupResizeIT {

    private static final List<String> NODES = List.of("node-1", "node-2", "node-3", "node-4", "node-5", "node-6");
    private static final List<String> FIRST_FIVE = NODES.subList(0, 5);
    private static final List<String> LAST_FOUR = NODES.subList(0, 4);
    private static final Duration ARM = Duration.ofSeconds(120);
    private static final Duration SIGNAL = Duration.ofSeconds(60);

    private ControlPlaneLab lab;

    @AfterEach
    void tearDown() {
        if (lab != null) {
            lab.close();
        }
    }

    @Test
    void growingAndShrinkingAnAutoGroupNeitherFlapsMembershipNorLosesQuorum() throws IOException {
        AgentSettings settings = AgentSettings.autoScaled();
        lab = ControlPlaneLab.start(NODES, Set.of("node-6"), "resize", settings,
                ProjectLayout.fromWorkingDirectory(), "resize");
        ControlPlane controlPlane = lab.controlPlane();
        AgentCluster agents = lab.agents();
        for (String name : FIRST_FIVE) {
            agents.node(name).awaitStatus("armed with quorum in a group of 5", s -> s.getArmed() && s.getQuorumHeld()
                    && s.getExpected() == 5, ARM);
        }
        String profileAt5 = agents.timings("node-1").getProfile();
        Duration probeAt5 = seconds(agents.timings("node-1").getProbeInterval());
        // every consumer has its snapshot; from here on a LEFT or JOIN of a member that stays is a flap
        for (String name : FIRST_FIVE) {
            for (String other : FIRST_FIVE) {
                agents.node(name).consumer().await(name + " sees " + other, 0, e -> e.isJoinOf(other), SIGNAL);
            }
        }
        Map<String, Long> logOffsets = logOffsets(agents);
        long grown = System.nanoTime();

        controlPlane.addToGroup("node-6");
        agents.node("node-6").awaitStatus("node-6 armed in a group of 6", s -> s.getArmed() && s.getQuorumHeld()
                && s.getExpected() == 6, ARM);
        for (String name : FIRST_FIVE) {
            agents.node(name).awaitStatus(name + " expects 6", s -> s.getExpected() == 6, SIGNAL);
        }
        long grownMillis = millisSince(grown);
        String profileAt6 = agents.timings("node-1").getProfile();
        Duration probeAt6 = seconds(agents.timings("node-1").getProbeInterval());
        assertThat(profileAt6).as("Auto follows the size").isNotEqualTo(profileAt5);
        // hold a few suspicion periods: a gossip restart or a mis-applied timing shows up as LEFT meanwhile
        Pause.sleep(settleTime(agents));

        long shrunk = System.nanoTime();
        controlPlane.removeFromGroup("node-6");
        controlPlane.removeFromGroup("node-5");
        for (String name : LAST_FOUR) {
            agents.node(name).awaitStatus(name + " expects 4", s -> s.getExpected() == 4, SIGNAL);
        }
        long shrunkMillis = millisSince(shrunk);
        String profileAt4 = agents.timings("node-1").getProfile();
        Duration probeAt4 = seconds(agents.timings("node-1").getProbeInterval());
        Pause.sleep(settleTime(agents));

        for (String name : LAST_FOUR) {
            AgentStatus status = agents.node(name).status().orElseThrow();
            assertThat(status.getArmed() && status.getQuorumHeld()).as(name + " armed with quorum at 4").isTrue();
        }
        List<String> flaps = new ArrayList<>();
        for (AgentNode consumerNode : agents.nodes()) {
            for (ConsumedEvent e : consumerNode.consumer().events()) {
                if (e.receivedNanos() < grown) {
                    continue;
                }
                boolean stays = LAST_FOUR.contains(e.node());
                boolean node5BeforeRemoval = e.node().equals("node-5") && e.receivedNanos() < shrunk;
                // node-6's consumer learns the group when node-6 joins: its JOINs are a first view, not flaps (a
                // flap there would still show as a LEFT)
                boolean node6Learning = consumerNode.name().equals("node-6");
                if ((stays || node5BeforeRemoval) && (e.isLiveLeftOf(e.node()) || isLiveJoin(e) && !node6Learning)) {
                    flaps.add(consumerNode.name() + " saw " + e.type() + " " + e.node() + " (" + e.source() + ")");
                }
            }
        }
        assertThat(flaps).as("LEFT/JOIN of members that stayed in the group, at any consumer").isEmpty();
        Map<String, Integer> quorumLosses = new LinkedHashMap<>();
        for (String name : LAST_FOUR) {
            quorumLosses.put(name, countSince(agents.node(name), logOffsets.get(name), "event=quorum_lost"));
        }
        assertThat(quorumLosses.values()).as("quorum losses of the group's agents " + quorumLosses)
                .allMatch(n -> n == 0);
        Map<String, Integer> gossipRestarts = new LinkedHashMap<>();
        for (String name : FIRST_FIVE) {
            gossipRestarts.put(name, countSince(agents.node(name), logOffsets.get(name), "event=gossip_started"));
        }
        assertThat(gossipRestarts.values()).as("gossip restarts " + gossipRestarts).allMatch(n -> n == 0);
        for (AgentNode agent : agents.nodes()) {
            assertThat(agent.watchdogEvents("reset", 0)).as("resets of " + agent.name()).isEmpty();
        }

        System.out.printf("""
                GroupResizeIT (Auto, watchdog %d s):
                  5 -> 6: node-6 armed and every agent expects 6   %6d ms   profile %s -> %s, probe %s -> %s
                  6 -> 4: every remaining agent expects 4           %6d ms   profile -> %s, probe -> %s
                  LEFT/JOIN of staying members: 0; quorum losses: %s; gossip restarts: %s; resets: 0
                """, settings.watchdogTimeout().toSeconds(), grownMillis, profileAt5, profileAt6, probeAt5, probeAt6,
                shrunkMillis, profileAt4, probeAt4, quorumLosses, gossipRestarts);
    }

    private static boolean isLiveJoin(ConsumedEvent e) {
        return e.type() == dev.fencing.proto.fencing.v1.EventType.JOIN && !"snapshot".equals(e.source());
    }

    /** Two suspicion timeouts of the current timings, at least 5 s: long enough for a flap to be seen. */
    private static Duration settleTime(AgentCluster agents) {
        var t = agents.timings("node-1");
        Duration probe = seconds(t.getProbeInterval());
        Duration suspicion = probe.multipliedBy(Math.max(1, t.getSuspicionMult()) * 2L);
        return suspicion.compareTo(Duration.ofSeconds(5)) < 0 ? Duration.ofSeconds(5) : suspicion;
    }

    private static Duration seconds(com.google.protobuf.Duration d) {
        return Duration.ofSeconds(d.getSeconds(), d.getNanos());
    }

    private static Map<String, Long> logOffsets(AgentCluster agents) throws IOException {
        Map<String, Long> offsets = new LinkedHashMap<>();
        for (AgentNode agent : agents.nodes()) {
            offsets.put(agent.name(), Files.size(agent.agent().log()));
        }
        return offsets;
    }

    private static int countSince(AgentNode agent, long offset, String needle) throws IOException {
        Path log = agent.agent().log();
        byte[] all = Files.readAllBytes(log);
        String tail = new String(all, (int) Math.min(offset, all.length), (int) Math.max(0, all.length - offset),
                StandardCharsets.UTF_8);
        int count = 0;
        for (int i = tail.indexOf(needle); i >= 0; i = tail.indexOf(needle, i + 1)) {
            count++;
        }
        return count;
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }
}
