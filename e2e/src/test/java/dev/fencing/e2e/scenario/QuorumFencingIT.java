package dev.fencing.e2e.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentLauncher;
import dev.fencing.e2e.agent.AgentNode;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.agent.ConsumedEvent;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.ObservedLine;
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
 * Issue 6 scenarios on five real agents, one per network namespace, each with an emulated softdog whose reset kills
 * the agent. Every scenario asserts safety (who may and who must not reset) with generous bounds and prints its
 * timings; the bound of a fence is {@code T_stop + watchdog timeout} from the fault, as the agents report them.
 */
class QuorumFencingIT {

    private static final List<String> NODES = List.of("node-1", "node-2", "node-3", "node-4", "node-5");
    private static final Duration ARM = Duration.ofSeconds(120);
    /** Process start-up, the emulator's check period and a loaded 2-core machine. */
    private static final Duration SLACK = Duration.ofSeconds(3);
    private static final Duration MEMBERSHIP = Duration.ofSeconds(60);

    private static ProjectLayout layout;
    private static AgentLauncher launcher;
    private NetnsLab lab;
    private AgentCluster cluster;
    private Duration tStop;
    private Duration watchdogTimeout;

    @BeforeAll
    static void locateAgent() {
        layout = ProjectLayout.fromWorkingDirectory();
        launcher = AgentLauncher.locate(layout);
    }

    @BeforeEach
    void startFiveArmedAgents(TestInfo info) {
        lab = NetnsLab.create(NODES);
        String test = info.getTestMethod().orElseThrow().getName();
        Path logs = layout.logDir("scenarios").resolve(test + "-" + lab.runId());
        cluster = AgentCluster.start(lab, launcher, "workers", AgentSettings.fastFence(),
                layout.e2eTarget().resolve("agent-lab").resolve(lab.runId()), logs);
        long armedMillis = cluster.awaitAllArmed(ARM);
        Timings timings = cluster.timings("node-1");
        tStop = Duration.ofSeconds(timings.getTStop().getSeconds(), timings.getTStop().getNanos());
        watchdogTimeout = Duration.ofSeconds(timings.getWatchdogTimeout().getSeconds(),
                timings.getWatchdogTimeout().getNanos());
        System.out.printf("%s: 5 agents armed after %d ms; T_stop=%d ms, watchdog timeout=%d ms (logs %s)%n", test,
                armedMillis, tStop.toMillis(), watchdogTimeout.toMillis(), logs);
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

    private Duration fenceBound() {
        return tStop.plus(watchdogTimeout).plus(SLACK);
    }

    @Test
    void minorityOfAThreeTwoPartitionFencesItselfWhileTheMajorityKeepsFeeding() {
        ScenarioReport report = new ScenarioReport("5 nodes, 3+2 partition");
        Set<String> majority = Set.of("node-1", "node-2", "node-3");
        Set<String> minority = Set.of("node-4", "node-5");

        long faultAt = System.nanoTime();
        lab.partition(majority, minority);

        for (String node : minority) {
            long millis = awaitReset(node, faultAt);
            report.add("reset after partition", node, millis, "<= " + fenceBound().toMillis());
            assertThat(millis).as("%s reset within T_stop + watchdog timeout + slack", node)
                    .isLessThanOrEqualTo(fenceBound().toMillis());
        }
        for (String observer : majority) {
            for (String gone : minority) {
                report.add("LEFT " + gone + " at consumer", observer, awaitLeft(observer, gone, faultAt), "");
            }
        }
        holdWithoutResets(majority, faultAt, fenceBound().plus(SLACK));
        assertNoResets(majority, faultAt);
        assertStillFeeding(majority);
        report.note("majority resets", "-", "0").print();
    }

    @Test
    void isolatedNodeAloneFencesAndRejoinsAfterHeal() {
        ScenarioReport report = new ScenarioReport("5 nodes, one isolated, then healed");
        Set<String> others = Set.of("node-1", "node-2", "node-3", "node-4");

        long faultAt = System.nanoTime();
        var isolation = lab.isolate("node-5");
        long resetMillis = awaitReset("node-5", faultAt);
        report.add("reset after isolation", "node-5", resetMillis, "<= " + fenceBound().toMillis());
        assertThat(resetMillis).isLessThanOrEqualTo(fenceBound().toMillis());
        for (String observer : others) {
            report.add("LEFT node-5 at consumer", observer, awaitLeft(observer, "node-5", faultAt), "");
        }

        long healAt = System.nanoTime();
        isolation.heal();
        cluster.reboot("node-5");
        for (String observer : others) {
            ConsumedEvent join = cluster.node(observer).consumer().await("JOIN of node-5", healAt,
                    e -> e.isJoinOf("node-5") && !"snapshot".equals(e.source()), MEMBERSHIP);
            report.add("JOIN node-5 after heal+reboot", observer, (join.receivedNanos() - healAt) / 1_000_000, "");
        }
        assertNoResets(others, faultAt);
        assertStillFeeding(others);
        report.print();
    }

    @Test
    void nodesThatCanOnlySendOrOnlyReceiveFenceThemselves() {
        ScenarioReport report = new ScenarioReport("5 nodes, one-way cuts");
        Set<String> healthy = Set.of("node-1", "node-2", "node-3");

        long faultAt = System.nanoTime();
        lab.cutOutbound("node-4");
        lab.cutInbound("node-5");

        long sendless = awaitReset("node-4", faultAt);
        long deaf = awaitReset("node-5", faultAt);
        report.add("reset, receives but cannot send", "node-4", sendless, "<= " + fenceBound().toMillis());
        report.add("reset, sends but cannot receive", "node-5", deaf, "<= " + fenceBound().toMillis());
        assertThat(sendless).isLessThanOrEqualTo(fenceBound().toMillis());
        assertThat(deaf).isLessThanOrEqualTo(fenceBound().toMillis());
        holdWithoutResets(healthy, faultAt, fenceBound().plus(SLACK));
        assertNoResets(healthy, faultAt);
        assertStillFeeding(healthy);
        report.print();
    }

    @Test
    void crashedNodeIsReportedLeftByEverySurvivingConsumer() {
        ScenarioReport report = new ScenarioReport("5 nodes, crash of one");
        List<String> survivors = List.of("node-1", "node-2", "node-3", "node-4");

        long crashAt = System.nanoTime();
        lab.crash("node-3");

        List<Long> latencies = new java.util.ArrayList<>();
        for (String observer : survivors) {
            long millis = awaitLeft(observer, "node-3", crashAt);
            latencies.add(millis);
            report.add("LEFT node-3 at consumer", observer, millis, "");
        }
        List<Long> sorted = latencies.stream().sorted().toList();
        report.add("p50 crash -> LEFT delivered", "-", sorted.get(sorted.size() / 2), "");
        report.add("p99 crash -> LEFT delivered", "-", sorted.get(sorted.size() - 1), "");
        holdWithoutResets(Set.copyOf(survivors), crashAt, fenceBound());
        assertNoResets(Set.copyOf(survivors), crashAt);
        report.print();
    }

    private long awaitReset(String node, long sinceNanos) {
        ObservedLine reset = cluster.node(node).watchdog().await(node + " watchdog reset",
                l -> l.receivedNanos() >= sinceNanos && "reset".equals(l.text("event")),
                fenceBound().plus(Duration.ofSeconds(30)));
        return (reset.receivedNanos() - sinceNanos) / 1_000_000;
    }

    private long awaitLeft(String observer, String gone, long sinceNanos) {
        ConsumedEvent left = cluster.node(observer).consumer().await("LEFT of " + gone, sinceNanos,
                e -> e.isLiveLeftOf(gone), MEMBERSHIP);
        return (left.receivedNanos() - sinceNanos) / 1_000_000;
    }

    private void assertNoResets(Set<String> nodes, long sinceNanos) {
        Map<String, List<ObservedLine>> resets = cluster.resetsSince(sinceNanos);
        for (String node : nodes) {
            assertThat(resets.get(node)).as("resets of %s, which kept quorum", node).isEmpty();
            assertThat(cluster.node(node).agent().isAlive()).as("agent of %s alive", node).isTrue();
        }
    }

    private void assertStillFeeding(Set<String> nodes) {
        long since = System.nanoTime();
        for (String node : nodes) {
            AgentNode agent = cluster.node(node);
            agent.watchdog().await(node + " fed", l -> l.receivedNanos() >= since && "feed".equals(l.text("event")),
                    watchdogTimeout);
        }
    }

    /** Watches {@code nodes} until {@code after} has passed since {@code startNanos}: a reset fails at once. */
    private void holdWithoutResets(Set<String> nodes, long startNanos, Duration after) {
        long left = Math.max(1, (startNanos + after.toNanos() - System.nanoTime()) / 1_000_000);
        Awaitility.await("no reset on " + nodes)
                .during(Duration.ofMillis(left))
                .atMost(Duration.ofMillis(left).plusSeconds(5))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> cluster.resetsSince(startNanos).entrySet().stream()
                        .filter(e -> nodes.contains(e.getKey())).allMatch(e -> e.getValue().isEmpty()));
    }
}
