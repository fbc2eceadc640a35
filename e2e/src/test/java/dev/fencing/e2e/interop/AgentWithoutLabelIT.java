package dev.fencing.e2e.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentLauncher;
import dev.fencing.e2e.agent.AgentNode;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.netns.LabNode;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.peer.GoPeerLog;
import dev.fencing.e2e.peer.GossipPeer;
import dev.fencing.e2e.peer.PeerGroup;
import dev.fencing.e2e.peer.PeerKind;
import dev.fencing.e2e.peer.PeerLauncher;
import dev.fencing.e2e.peer.PeerSpec;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.proto.fencing.v1.PeerMemberState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Real agents of a group with {@code gossipLabel: None} and a Go memberlist 0.2.2 peer (no label support) as the
 * third expected member, each in its own network namespace: the agents gossip without a label header, so the 0.2.2
 * node joins their memberlist, is seen alive by both agents and sees both, and the agents arm with quorum.
 */
class AgentWithoutLabelIT {

    private static final Duration CONVERGE = Duration.ofSeconds(60);
    private static final Pattern KEY = Pattern.compile("keys: \\[\"([^\"]+)\"]");

    private static ProjectLayout layout;
    private static AgentLauncher agents;
    private static PeerLauncher goPeers;
    private NetnsLab lab;
    private AgentCluster cluster;
    private GossipPeer go;

    @BeforeAll
    static void locate() {
        layout = ProjectLayout.fromWorkingDirectory();
        agents = AgentLauncher.locate(layout);
        goPeers = PeerLauncher.goOnly(layout);
    }

    @AfterEach
    void tearDown() {
        if (cluster != null) {
            cluster.close();
        }
        if (lab != null) {
            lab.close();
        }
        if (go != null) {
            assertThat(GoPeerLog.wireComplaints(go.process().stderrLog()))
                    .as("what the 0.2.2 peer could not decode (log %s)", go.process().stderrLog()).isEmpty();
        }
    }

    @Test
    void agentsWithoutGossipLabelShareTheirGroupWithAMemberlist022Peer() throws IOException {
        lab = NetnsLab.create(List.of("node-1", "node-2", "node-3"));
        Path logs = layout.logDir("interop-agents").resolve(lab.runId());
        long start = System.nanoTime();
        cluster = AgentCluster.start(lab, agents, "workers", AgentSettings.fastFence(),
                layout.e2eTarget().resolve("agent-lab").resolve(lab.runId()), logs, Set.of("node-3"),
                yaml -> yaml + "  gossipLabel: None\n");
        Matcher key = KEY.matcher(Files.readString(cluster.standaloneConfig()));
        assertThat(key.find()).as("the group's gossip key in %s", cluster.standaloneConfig()).isTrue();

        LabNode node3 = lab.node("node-3");
        String seed = lab.node("node-1").address() + ":" + AgentNode.GOSSIP_PORT;
        go = goPeers.withPrefix(node3.execPrefix()).start(PeerKind.GO,
                PeerSpec.of("node-3", node3.address(), AgentNode.GOSSIP_PORT).withConfig("lan").withKey(key.group(1))
                        .joining(List.of(seed)), logs);
        lab.adopt(go);
        go.awaitReady(CONVERGE);

        long converged = PeerGroup.awaitConverged(List.of(go), Set.of("node-1", "node-2", "node-3"), start,
                CONVERGE);
        for (String name : List.of("node-1", "node-2")) {
            cluster.node(name).awaitStatus("node-3 alive in gossip", s -> s.getPeersList().stream()
                    .anyMatch(p -> p.getName().equals("node-3")
                            && p.getMemberState() == PeerMemberState.PEER_MEMBER_STATE_ALIVE), CONVERGE);
        }
        long armed = cluster.awaitAllArmed(CONVERGE);
        System.out.printf("interop-matrix check=agent-without-label memberlist=v0.2.2 go_converged_ms=%d "
                + "agents_armed_ms=%d%n", converged, armed);
    }
}
