package dev.fencing.e2e.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentLauncher;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.proto.fencing.v1.NetworkReachability;
import dev.fencing.proto.fencing.v1.PeerStatus;
import dev.fencing.proto.fencing.v1.Timings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Issue 14.1 end to end: three real agents on a lab with two bridges (198.18.0.0/24 and 198.19.0.0/24), every
 * agent gossiping on both ({@code fencing.networks}), one memberlist and one heartbeat per peer on each. Cutting
 * node-3 off on the second network alone fences nobody under {@code Any} and fences node-3 under {@code All};
 * cutting both networks fences node-3 under {@code Any} too, as with one network. Prints its timings.
 */
class MultiNetworkFencingIT {

    private static final List<String> NODES = List.of("node-1", "node-2", "node-3");
    private static final Set<String> MAJORITY = Set.of("node-1", "node-2");
    private static final Duration ARM = Duration.ofSeconds(90);
    /** Process start-up, the emulator's check period and a loaded 2-core machine. */
    private static final Duration SLACK = Duration.ofSeconds(3);

    private static ProjectLayout layout;
    private static AgentLauncher launcher;
    private NetnsLab lab;
    private AgentCluster cluster;
    private Duration tStop;
    private Duration watchdogTimeout;
    private String test;

    @BeforeAll
    static void locateAgent() {
        layout = ProjectLayout.fromWorkingDirectory();
        launcher = AgentLauncher.locate(layout);
    }

    @BeforeEach
    void nameTest(TestInfo info) {
        test = info.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void tearDown() {
        if (cluster != null) {
            cluster.close();
        }
        if (lab != null) {
            lab.close();
        }
    }

    private void startOnTwoNetworks(String reachability) {
        lab = NetnsLab.create(NODES, 2);
        Path logs = layout.logDir("multinet").resolve(test + "-" + lab.runId());
        cluster = AgentCluster.startOnEveryNetwork(lab, launcher, "workers", AgentSettings.fastFence(), reachability,
                layout.e2eTarget().resolve("agent-lab").resolve(lab.runId()), logs);
        long armedMillis = cluster.awaitAllArmed(ARM);
        Timings timings = cluster.timings("node-1");
        tStop = Duration.ofSeconds(timings.getTStop().getSeconds(), timings.getTStop().getNanos());
        watchdogTimeout = Duration.ofSeconds(timings.getWatchdogTimeout().getSeconds(),
                timings.getWatchdogTimeout().getNanos());
        // Both networks carry round trips before any fault.
        Awaitility.await("round trips on both networks at node-1").atMost(Duration.ofSeconds(30))
                .until(() -> networksOf("node-1", "node-3").values().stream().allMatch(Boolean::booleanValue)
                        && networksOf("node-1", "node-3").size() == 2);
        System.out.printf("%s: 3 agents on 2 networks (%s) armed after %d ms; T_stop=%d ms, watchdog=%d ms (logs %s)%n",
                test, reachability, armedMillis, tStop.toMillis(), watchdogTimeout.toMillis(), logs);
    }

    /** @return {@code peer}'s reachability per network as {@code observer}'s GetStatus reports it */
    private Map<String, Boolean> networksOf(String observer, String peer) {
        return cluster.node(observer).status().map(s -> s.getPeersList().stream()
                .filter(p -> p.getName().equals(peer)).findFirst().map(PeerStatus::getNetworksList)
                .orElse(List.of())).orElse(List.of()).stream()
                .collect(java.util.stream.Collectors.toMap(NetworkReachability::getNetwork,
                        NetworkReachability::getConfirmed));
    }

    private Duration fenceBound() {
        return tStop.plus(watchdogTimeout).plus(SLACK);
    }

    @Test
    void underAnyCuttingOneNetworkFencesNobodyAndCuttingBothFencesTheCutOffNode() {
        startOnTwoNetworks("Any");
        ScenarioReport report = new ScenarioReport("3 nodes, 2 networks, reachability Any");
        long cutAt = System.nanoTime();
        lab.isolateOn(1, "node-3");
        Awaitility.await("node-1 sees node-3 lost on the second network only").atMost(Duration.ofSeconds(30))
                .until(() -> networksOf("node-1", "node-3").equals(Map.of(lab.networkCidr(0), true,
                        lab.networkCidr(1), false)));
        report.add("second network lost (node-1's view of node-3)", "node-1",
                (System.nanoTime() - cutAt) / 1_000_000, "-");
        Duration observed = fenceBound().multipliedBy(2);
        holdWithoutResets(Set.copyOf(NODES), cutAt, observed);
        report.add("no reset anywhere, observed for", "all", observed.toMillis(),
                "2 x (T_stop + watchdog + slack)");
        assertThat(cluster.node("node-3").status().orElseThrow().getQuorumHeld()).isTrue();

        long bothAt = System.nanoTime();
        lab.isolateOn(0, "node-3");
        long resetMillis = awaitReset("node-3", bothAt);
        report.add("both networks cut -> reset", "node-3", resetMillis, "<= T_stop + watchdog " + fenceBound()
                .minus(SLACK).toMillis());
        assertThat(resetMillis).isLessThanOrEqualTo(fenceBound().toMillis());
        holdWithoutResets(MAJORITY, bothAt, Duration.ofSeconds(2));
        report.print();
    }

    @Test
    void underAllTheNodeCutOffOnOneNetworkIsFencedAndTheOthersKeepQuorum() {
        startOnTwoNetworks("All");
        ScenarioReport report = new ScenarioReport("3 nodes, 2 networks, reachability All");
        long cutAt = System.nanoTime();
        lab.isolateOn(1, "node-3");
        long resetMillis = awaitReset("node-3", cutAt);
        long lastFeedMillis = cluster.node("node-3").watchdogEvents("feed", cutAt).stream()
                .mapToLong(l -> (l.receivedNanos() - cutAt) / 1_000_000).max().orElse(0);
        report.add("last feed after the one-network cut", "node-3", lastFeedMillis, "<= T_stop " + tStop.toMillis());
        report.add("one-network cut -> reset", "node-3", resetMillis, "<= T_stop + watchdog " + fenceBound()
                .minus(SLACK).toMillis());
        assertThat(lastFeedMillis).isLessThanOrEqualTo(tStop.toMillis() + SLACK.toMillis());
        assertThat(resetMillis).isLessThanOrEqualTo(fenceBound().toMillis());
        holdWithoutResets(MAJORITY, cutAt, Duration.ofSeconds(2));
        assertThat(cluster.node("node-1").status().orElseThrow().getQuorumHeld()).isTrue();
        report.print();
    }

    private long awaitReset(String node, long sinceNanos) {
        return ResetWatch.awaitReset(cluster, node, sinceNanos, fenceBound().plus(Duration.ofSeconds(30)));
    }

    /** Watches {@code nodes} until {@code after} has passed since {@code startNanos}: a reset fails at once. */
    private void holdWithoutResets(Set<String> nodes, long startNanos, Duration after) {
        ResetWatch.holdWithoutResets(cluster, nodes, startNanos, after);
    }
}
