package dev.fencing.e2e.netns;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.peer.GoPeerLog;
import dev.fencing.e2e.peer.GossipPeer;
import dev.fencing.e2e.peer.MembersView;
import dev.fencing.e2e.peer.PeerGroup;
import dev.fencing.e2e.peer.PeerKind;
import dev.fencing.e2e.peer.PeerLauncher;
import dev.fencing.e2e.peer.PeerSpec;
import dev.fencing.e2e.peer.ProjectLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Mixed gossip on the lab network: Java memberlist nodes and Go memberlist 0.2.2 peers, one per network namespace,
 * with faults injected by the harness (namespace crash, isolation by nftables). Local config, compression on.
 */
class NamespacedGossipIT {

    private static final int PORT = 7946;
    private static final Duration CONVERGE = Duration.ofSeconds(30);
    private static final Duration DETECT = Duration.ofSeconds(50);
    /** Alone, a node's probes slow down (awareness) and its suspicions expire only at the maximum timeout. */
    private static final Duration ALONE = Duration.ofSeconds(90);
    private static final List<String> NODES = List.of("java-1", "go-1", "java-2", "go-2");

    private static ProjectLayout layout;
    private static PeerLauncher launcher;
    private NetnsLab lab;
    private final Map<String, GossipPeer> peers = new LinkedHashMap<>();

    @BeforeAll
    static void locateBothImplementations() {
        layout = ProjectLayout.fromWorkingDirectory();
        launcher = PeerLauncher.forHost(layout);
    }

    @BeforeEach
    void startMixedClusterInNamespaces() {
        lab = NetnsLab.create(NODES);
        Path logs = layout.logDir("netns-gossip").resolve(lab.runId());
        String seed = lab.node("java-1").address() + ":" + PORT;
        long start = System.nanoTime();
        for (String name : NODES) {
            LabNode node = lab.node(name);
            PeerKind kind = name.startsWith("go") ? PeerKind.GO : PeerKind.JAVA;
            PeerSpec spec = PeerSpec.of(name, node.address(), PORT);
            if (!name.equals("java-1")) {
                spec = spec.joining(List.of(seed));
            }
            GossipPeer peer = launcher.withPrefix(node.execPrefix()).start(kind, spec, logs);
            lab.adopt(peer);
            peers.put(name, peer);
            peer.awaitReady(CONVERGE);
        }
        long millis = PeerGroup.awaitConverged(peers.values(), PeerGroup.names(peers.values()), start, CONVERGE);
        System.out.printf("netns gossip: %s converged over veth in %d ms%n", NODES, millis);
    }

    @AfterEach
    void tearDown() {
        lab.close();
        for (GossipPeer peer : peers.values()) {
            if (peer.kind() == PeerKind.GO) {
                assertThat(GoPeerLog.wireComplaints(peer.process().stderrLog())).as("Go peer %s", peer).isEmpty();
            }
        }
    }

    @Test
    void crashedNamespaceIsDeclaredDeadByBothKinds() {
        long crashAt = System.nanoTime();
        assertThat(lab.crash("go-1")).isEqualTo(1);

        for (String survivor : List.of("java-1", "java-2", "go-2")) {
            long millis = awaitGone(peers.get(survivor), "go-1", crashAt);
            System.out.printf("netns gossip: crash of go-1 declared dead by %s after %d ms%n", survivor, millis);
        }
    }

    @Test
    void isolatedJavaNodeIsDeclaredDeadByEveryoneAndSeesEveryoneDead() {
        long isolatedAt = System.nanoTime();
        lab.isolate("java-2");

        List<String> report = new ArrayList<>();
        for (String survivor : List.of("java-1", "go-1", "go-2")) {
            report.add(survivor + " " + awaitGone(peers.get(survivor), "java-2", isolatedAt) + " ms");
        }
        long aloneAt = peers.get("java-2").process().await("java-2 alone",
                line -> line.receivedNanos() >= isolatedAt && "members".equals(line.text("event"))
                        && MembersView.from(line).notDead().equals(Set.of("java-2")), ALONE).receivedNanos();
        System.out.printf("netns gossip: isolation of java-2 detected by %s; java-2 lists only itself after %d ms%n",
                report, (aloneAt - isolatedAt) / 1_000_000);
    }

    private static long awaitGone(GossipPeer observer, String member, long sinceNanos) {
        long seenAt = observer.process().await(observer + " declares " + member + " dead",
                line -> line.receivedNanos() >= sinceNanos && "members".equals(line.text("event"))
                        && !MembersView.from(line).notDead().contains(member), DETECT).receivedNanos();
        return (seenAt - sinceNanos) / 1_000_000;
    }
}
