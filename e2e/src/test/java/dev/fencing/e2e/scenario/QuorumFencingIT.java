package dev.fencing.e2e.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentLauncher;
import dev.fencing.e2e.agent.AgentNode;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.agent.ConsumedEvent;
import dev.fencing.e2e.agent.GoFencingConsumer;
import dev.fencing.e2e.controlplane.ControlPlane;
import dev.fencing.e2e.controlplane.ControlPlaneLab;
import dev.fencing.e2e.controlplane.KubeNodeWatch;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.ObservedLine;
import dev.fencing.proto.fencing.v1.Timings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Issue 6 scenarios on five real agents, one per network namespace, each with an emulated softdog whose reset kills
 * the agent. Every scenario asserts safety (who may and who must not reset) with generous bounds and prints its
 * timings; the bound of a fence is {@code T_stop + watchdog timeout} from the fault, as the agents report them.
 *
 * <p>The 3+2 partition and the isolation run on the real control plane ({@link ControlPlaneLab}: agents configured by
 * the controller, a kubelet stand-in per node that the reset kills too) and also check what Kubernetes shows: the
 * reset nodes go Unknown (node lifecycle controller), the controller records them in {@code status.fencedNodes} only
 * while Kubernetes shows them not Ready, taints at most {@code --max-out-of-service} (1) of them out of service, never
 * touches the majority, and clears it all when the node boots again.
 */
class QuorumFencingIT {

    private static final List<String> NODES = List.of("node-1", "node-2", "node-3", "node-4", "node-5");
    private static final Duration ARM = Duration.ofSeconds(120);
    /** Process start-up, the emulator's check period and a loaded 2-core machine. */
    private static final Duration SLACK = Duration.ofSeconds(3);
    private static final Duration MEMBERSHIP = Duration.ofSeconds(60);
    /** Issue 6: 10 % loss on every link for 60 s (~240 heartbeat rounds at 250 ms). */
    private static final Duration LOSS_WINDOW = Duration.ofSeconds(60);

    /** Reset -> Node Unknown (kcm grace period 8 s, period 1 s) -> recorded fenced (safe-to-assume-fenced) -> taint. */
    private static final Duration KUBE_VIEW = Duration.ofSeconds(90);

    private static ProjectLayout layout;
    private static AgentLauncher launcher;
    private ControlPlaneLab controlPlaneLab;
    private KubeNodeWatch kube;
    private NetnsLab lab;
    private AgentCluster cluster;
    private Duration tStop;
    private Duration watchdogTimeout;
    private String test;
    private Path logs;
    /** Go example consumers (what Cilium would run) next to agents, by node; closed after each test. */
    private final Map<String, GoFencingConsumer> goConsumers = new LinkedHashMap<>();

    @BeforeAll
    static void locateAgent() {
        layout = ProjectLayout.fromWorkingDirectory();
        launcher = AgentLauncher.locate(layout);
    }

    @BeforeEach
    void nameTest(TestInfo info) {
        test = info.getTestMethod().orElseThrow().getName();
    }

    /** Starts the five agents with {@code settings} and waits until every one is armed with quorum. */
    private void startFiveArmedAgents(AgentSettings settings) {
        startArmedAgents(NODES, settings);
    }

    /** Creates a lab of {@code nodes}, starts an agent on each and waits until every one is armed with quorum. */
    private void startArmedAgents(List<String> nodes, AgentSettings settings) {
        lab = NetnsLab.create(nodes);
        logs = layout.logDir("scenarios").resolve(test + "-" + lab.runId());
        cluster = AgentCluster.start(lab, launcher, "workers", settings,
                layout.e2eTarget().resolve("agent-lab").resolve(lab.runId()), logs);
        awaitArmed(nodes);
    }

    /**
     * Starts the five agents on the real control plane (configured by the controller with {@code settings} as the
     * NodeGroup's policy, a kubelet stand-in per node), waits until every one is armed and starts watching the API
     * server.
     */
    private void startFiveArmedAgentsOnTheControlPlane(AgentSettings settings) {
        controlPlaneLab = ControlPlaneLab.start(NODES, "workers", settings, layout, "scenarios");
        lab = controlPlaneLab.lab();
        cluster = controlPlaneLab.agents();
        logs = controlPlaneLab.logDir();
        awaitArmed(NODES);
        kube = KubeNodeWatch.start(controlPlaneLab.controlPlane());
    }

    private void awaitArmed(List<String> nodes) {
        long armedMillis = cluster.awaitAllArmed(ARM);
        Timings timings = cluster.timings("node-1");
        tStop = Duration.ofSeconds(timings.getTStop().getSeconds(), timings.getTStop().getNanos());
        watchdogTimeout = Duration.ofSeconds(timings.getWatchdogTimeout().getSeconds(),
                timings.getWatchdogTimeout().getNanos());
        System.out.printf("%s: %d agents armed after %d ms; T_stop=%d ms, watchdog timeout=%d ms (logs %s)%n", test,
                nodes.size(), armedMillis, tStop.toMillis(), watchdogTimeout.toMillis(), logs);
    }

    @AfterEach
    void tearDown() {
        goConsumers.values().forEach(GoFencingConsumer::close);
        goConsumers.clear();
        if (kube != null) {
            kube.close();
        }
        if (controlPlaneLab != null) {
            controlPlaneLab.close();
            return;
        }
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
        startFiveArmedAgentsOnTheControlPlane(AgentSettings.fastFence());
        ScenarioReport report = new ScenarioReport("5 nodes, 3+2 partition (Java and Go consumers)");
        Set<String> majority = Set.of("node-1", "node-2", "node-3");
        Set<String> minority = Set.of("node-4", "node-5");
        startGoConsumers(majority.stream().sorted().toList(), "node-5");

        long faultAt = System.nanoTime();
        Instant faultWall = Instant.now();
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
                report.add("LEFT " + gone + " at Go consumer", observer, awaitGoLive(observer, "LEFT", gone, faultWall),
                        "<= " + MEMBERSHIP.toMillis());
            }
        }
        holdWithoutResets(majority, faultAt, fenceBound().plus(SLACK));
        assertNoResets(majority, faultAt);
        assertStillFeeding(majority);

        // what Kubernetes shows: both reset nodes go Unknown, are recorded fenced after that, one is taken out of
        // service (--max-out-of-service 1); the majority is never recorded, never tainted
        for (String node : minority) {
            reportKubeView(report, node, faultAt);
        }
        KubeNodeWatch.Snapshot tainted = kube.await("out-of-service taint on one minority node", faultAt,
                look -> minority.stream().filter(n -> look.tainted(n, ControlPlane.OUT_OF_SERVICE_TAINT)).count() == 1,
                KUBE_VIEW);
        report.add("partition -> out-of-service taint on one of them", "-", millis(tainted.nanos() - faultAt), "");
        long end = System.nanoTime();
        assertThat(kube.fencedWhileReady(faultAt, end)).as("looks with a Ready node recorded fenced").isEmpty();
        for (KubeNodeWatch.Snapshot look : kube.since(faultAt)) {
            assertThat(minority.stream().filter(n -> look.tainted(n, ControlPlane.OUT_OF_SERVICE_TAINT)).count())
                    .as("out-of-service taints at once (storm limit 1) in " + look).isLessThanOrEqualTo(1);
            for (String node : majority) {
                assertThat(look.fenced()).as("fenced nodes").doesNotContain(node);
                assertThat(look.tainted(node, ControlPlane.OUT_OF_SERVICE_TAINT)).as(node + " out of service")
                        .isFalse();
            }
        }
        assertGoConsumersSawTheJavaConsumersLiveEvents(faultAt, faultWall);
        report.note("majority resets", "-", "0").print();
    }

    /**
     * Awaits and reports {@code node}'s loss as Kubernetes shows it: Ready Unknown with the unreachable taint, then
     * its record in {@code status.fencedNodes}; the record must not come first.
     */
    private KubeNodeWatch.Snapshot reportKubeView(ScenarioReport report, String node, long faultAt) {
        KubeNodeWatch.Snapshot unknown = kube.await(node + " Unknown and tainted unreachable", faultAt,
                look -> "Unknown".equals(look.ready().get(node)) && look.tainted(node, ControlPlane.UNREACHABLE_TAINT),
                KUBE_VIEW);
        KubeNodeWatch.Snapshot fenced = kube.await(node + " in status.fencedNodes", faultAt,
                look -> look.fenced().contains(node), KUBE_VIEW);
        KubeNodeWatch.Snapshot firstNotReady = kube.first(faultAt, look -> !look.isReady(node)).orElseThrow();
        assertThat(fenced.nanos()).as(node + " recorded fenced no earlier than Kubernetes saw it not Ready")
                .isGreaterThanOrEqualTo(firstNotReady.nanos());
        report.add("fault -> Node Unknown, tainted unreachable", node, millis(unknown.nanos() - faultAt), "");
        report.add("fault -> in status.fencedNodes", node, millis(fenced.nanos() - faultAt), "");
        return fenced;
    }

    private static long millis(long nanos) {
        return nanos / 1_000_000;
    }

    @Test
    void isolatedNodeAloneFencesAndRejoinsAfterHeal() {
        startFiveArmedAgentsOnTheControlPlane(AgentSettings.fastFence());
        ScenarioReport report = new ScenarioReport("5 nodes, one isolated, then healed (Java and Go consumers)");
        Set<String> others = Set.of("node-1", "node-2", "node-3", "node-4");
        startGoConsumers(others.stream().sorted().toList(), "node-5");

        long faultAt = System.nanoTime();
        Instant faultWall = Instant.now();
        var isolation = lab.isolate("node-5");
        long resetMillis = awaitReset("node-5", faultAt);
        report.add("reset after isolation", "node-5", resetMillis, "<= " + fenceBound().toMillis());
        assertThat(resetMillis).isLessThanOrEqualTo(fenceBound().toMillis());
        for (String observer : others) {
            report.add("LEFT node-5 at consumer", observer, awaitLeft(observer, "node-5", faultAt), "");
            report.add("LEFT node-5 at Go consumer", observer, awaitGoLive(observer, "LEFT", "node-5", faultWall),
                    "<= " + MEMBERSHIP.toMillis());
        }

        // Kubernetes: node-5 goes Unknown, then the controller records it fenced and takes it out of service
        reportKubeView(report, "node-5", faultAt);
        KubeNodeWatch.Snapshot tainted = kube.await("out-of-service taint on node-5", faultAt,
                look -> look.tainted("node-5", ControlPlane.OUT_OF_SERVICE_TAINT), KUBE_VIEW);
        report.add("isolation -> out-of-service taint", "node-5", millis(tainted.nanos() - faultAt), "");

        long healAt = System.nanoTime();
        Instant healWall = Instant.now();
        assertThat(kube.fencedWhileReady(faultAt, healAt)).as("looks with a Ready node recorded fenced").isEmpty();
        isolation.heal();
        cluster.node("node-5").boot();
        for (String observer : others) {
            ConsumedEvent join = cluster.node(observer).consumer().await("JOIN of node-5", healAt,
                    e -> e.isJoinOf("node-5") && !"snapshot".equals(e.source()), MEMBERSHIP);
            report.add("JOIN node-5 after heal+reboot", observer, (join.receivedNanos() - healAt) / 1_000_000, "");
            report.add("JOIN node-5 after heal+reboot at Go consumer", observer,
                    awaitGoLive(observer, "JOIN", "node-5", healWall), "<= " + MEMBERSHIP.toMillis());
        }
        // recovery: node-5's kubelet renews again, its agent reports again: Ready, untainted, no longer fenced
        KubeNodeWatch.Snapshot recovered = kube.await("node-5 Ready, untainted and no longer recorded fenced", healAt,
                look -> look.isReady("node-5") && !look.tainted("node-5", ControlPlane.OUT_OF_SERVICE_TAINT)
                        && !look.tainted("node-5", ControlPlane.UNREACHABLE_TAINT) && look.fenced().isEmpty(),
                KUBE_VIEW);
        report.add("heal + reboot -> Ready, taints gone, not fenced", "node-5", millis(recovered.nanos() - healAt), "");
        for (KubeNodeWatch.Snapshot look : kube.since(faultAt)) {
            for (String node : others) {
                assertThat(look.fenced()).as("fenced nodes").doesNotContain(node);
                assertThat(look.tainted(node, ControlPlane.OUT_OF_SERVICE_TAINT)).as(node + " out of service")
                        .isFalse();
            }
        }
        assertNoResets(others, faultAt);
        assertStillFeeding(others);
        assertGoConsumersSawTheJavaConsumersLiveEvents(faultAt, faultWall);
        report.print();
    }

    @Test
    void nodesThatCanOnlySendOrOnlyReceiveFenceThemselves() {
        startFiveArmedAgents(AgentSettings.fastFence());
        ScenarioReport report = new ScenarioReport("5 nodes, one-way cuts (Java and Go consumers)");
        Set<String> healthy = Set.of("node-1", "node-2", "node-3");
        startGoConsumers(healthy.stream().sorted().toList(), "node-5");

        long faultAt = System.nanoTime();
        Instant faultWall = Instant.now();
        lab.cutOutbound("node-4");
        lab.cutInbound("node-5");

        long sendless = awaitReset("node-4", faultAt);
        long deaf = awaitReset("node-5", faultAt);
        report.add("reset, receives but cannot send", "node-4", sendless, "<= " + fenceBound().toMillis());
        report.add("reset, sends but cannot receive", "node-5", deaf, "<= " + fenceBound().toMillis());
        assertThat(sendless).isLessThanOrEqualTo(fenceBound().toMillis());
        assertThat(deaf).isLessThanOrEqualTo(fenceBound().toMillis());
        reportLeftAtBothConsumers(report, healthy, Set.of("node-4", "node-5"), faultAt, faultWall);
        holdWithoutResets(healthy, faultAt, fenceBound().plus(SLACK));
        assertNoResets(healthy, faultAt);
        assertStillFeeding(healthy);
        assertGoConsumersSawTheJavaConsumersLiveEvents(faultAt, faultWall);
        report.print();
    }

    @Test
    void crashedNodeIsReportedLeftByEverySurvivingConsumer() {
        startFiveArmedAgents(AgentSettings.fastFence());
        ScenarioReport report = new ScenarioReport("5 nodes, crash of one (Java and Go consumers)");
        List<String> survivors = List.of("node-1", "node-2", "node-4", "node-5");
        startGoConsumers(survivors, "node-3");

        long crashAt = System.nanoTime();
        Instant crashWall = Instant.now();
        lab.crash("node-3");

        List<Long> latencies = new ArrayList<>();
        List<Long> goLatencies = new ArrayList<>();
        for (String observer : survivors) {
            long millis = awaitLeft(observer, "node-3", crashAt);
            latencies.add(millis);
            report.add("LEFT node-3 at consumer", observer, millis, "");
            long goMillis = awaitGoLive(observer, "LEFT", "node-3", crashWall);
            goLatencies.add(goMillis);
            report.add("LEFT node-3 at Go consumer", observer, goMillis, "<= " + MEMBERSHIP.toMillis());
        }
        List<Long> sorted = latencies.stream().sorted().toList();
        report.add("p50 crash -> LEFT delivered", "-", sorted.get(sorted.size() / 2), "");
        report.add("p99 crash -> LEFT delivered", "-", sorted.get(sorted.size() - 1), "");
        List<Long> goSorted = goLatencies.stream().sorted().toList();
        report.add("p50 crash -> LEFT delivered, Go consumer", "-", goSorted.get(goSorted.size() / 2), "");
        report.add("p99 crash -> LEFT delivered, Go consumer", "-", goSorted.get(goSorted.size() - 1), "");
        holdWithoutResets(Set.copyOf(survivors), crashAt, fenceBound());
        assertNoResets(Set.copyOf(survivors), crashAt);
        assertGoConsumersSawTheJavaConsumersLiveEvents(crashAt, crashWall);
        report.print();
    }

    /**
     * Starts the Go example consumer next to each of {@code observers}' agents and waits until each has synced
     * (GetAll) with {@code member} present, so a fault after this is measured from a consumer that is up.
     */
    private void startGoConsumers(List<String> observers, String member) {
        Path binary = GoFencingConsumer.build(layout);
        for (String observer : observers) {
            goConsumers.put(observer,
                    GoFencingConsumer.start(observer, binary, cluster.node(observer).socket(), logs));
        }
        goConsumers.values().forEach(c -> c.awaitSyncWith(member, MEMBERSHIP));
    }

    /**
     * @return ms from {@code sinceWall} to the Go consumer of {@code observer} receiving a live {@code type} of
     *     {@code member}, by its own clock; within the Java consumer's bound (MEMBERSHIP) or the test fails
     */
    private long awaitGoLive(String observer, String type, String member, Instant sinceWall) {
        return Duration.between(sinceWall, goConsumers.get(observer).awaitLive(type, member, sinceWall, MEMBERSHIP))
                .toMillis();
    }

    /** Awaits and reports, at each of {@code observers}, LEFT of each of {@code gone} at its Java and Go consumer. */
    private void reportLeftAtBothConsumers(ScenarioReport report, Set<String> observers, Set<String> gone,
            long faultAt, Instant faultWall) {
        for (String observer : observers.stream().sorted().toList()) {
            for (String member : gone.stream().sorted().toList()) {
                report.add("LEFT " + member + " at consumer", observer, awaitLeft(observer, member, faultAt), "");
                report.add("LEFT " + member + " at Go consumer", observer,
                        awaitGoLive(observer, "LEFT", member, faultWall), "<= " + MEMBERSHIP.toMillis());
            }
        }
    }

    /** Both consumers of one agent read the same stream: the same live JOIN/LEFT events, in the same order. */
    private void assertGoConsumersSawTheJavaConsumersLiveEvents(long sinceNanos, Instant sinceWall) {
        goConsumers.forEach((observer, go) -> {
            List<String> java = cluster.node(observer).consumer().events().stream()
                    .filter(e -> e.receivedNanos() >= sinceNanos && !"snapshot".equals(e.source()))
                    .map(e -> e.type() + " " + e.node()).toList();
            assertThat(go.liveEventsSince(sinceWall))
                    .as("live events at %s's Go consumer vs its Java consumer", observer)
                    .containsExactlyElementsOf(java);
        });
    }

    /**
     * An even split with LowestName: the side without the lowest name fences within the bound (safety), and the side
     * holding node-1 is granted the tie, is never reset and keeps feeding through the split (liveness; asserted since
     * the agent re-evaluates a stale verdict at the feed reading and asks the tie-breakers early, commit 313d391).
     */
    @Test
    void evenSplitFencesTheSideWithoutTheLowestName() {
        startArmedAgents(List.of("node-1", "node-2", "node-3", "node-4"), AgentSettings.fastFence());
        ScenarioReport report = new ScenarioReport(
                "4 nodes, 2+2 split, tie-breaker LowestName (Java and Go consumers)");
        Set<String> lowest = Set.of("node-1", "node-2");
        Set<String> other = Set.of("node-3", "node-4");
        startGoConsumers(lowest.stream().sorted().toList(), "node-4");

        long faultAt = System.nanoTime();
        Instant faultWall = Instant.now();
        lab.partition(lowest, other);

        for (String node : other) {
            long millis = awaitReset(node, faultAt);
            report.add("reset, side without node-1", node, millis, "<= " + fenceBound().toMillis());
            assertThat(millis).isLessThanOrEqualTo(fenceBound().toMillis());
        }
        reportLeftAtBothConsumers(report, lowest, other, faultAt, faultWall);
        // the lowest side must outlive every moment at which it could have fenced: T_stop + watchdog timeout + slack
        holdWithoutResets(lowest, faultAt, fenceBound().plus(SLACK));
        assertNoResets(lowest, faultAt);
        for (String node : lowest) {
            long fedFor = feedsSince(node, faultAt);
            report.note("watchdog feeds since the split", node, String.valueOf(fedFor));
            assertThat(fedFor).as("%s (side of node-1) keeps feeding through the split", node)
                    .isGreaterThanOrEqualTo(fenceBound().toSeconds() / 2);
            String outcome = cluster.node(node).status().orElseThrow().getTieBreakerOutcome();
            report.note("tie-breaker outcome", node, outcome);
            assertThat(outcome).as("%s tie-breaker outcome", node).containsIgnoringCase("LowestName");
        }
        assertStillFeeding(lowest);
        assertGoConsumersSawTheJavaConsumersLiveEvents(faultAt, faultWall);
        report.note("resets on the side of node-1", "-", "0").print();
    }

    @Test
    void lossOnEveryLinkAndAStalledAgentCauseNoResetAndNoFalseLeft() {
        // A stall longer than the (stretched) quorum window is a quorum loss by design (T_stop bounds it), so this
        // scenario runs with a window that a 3 s stall fits in: T_stop = 4 s x cap + tick.
        startFiveArmedAgents(AgentSettings.fastFence().withTiming("quorumWindow", "4s")
                .withTiming("armingDelay", "4s"));
        ScenarioReport report = new ScenarioReport("5 nodes, 10% loss on every link for " + LOSS_WINDOW.toSeconds()
                + " s, node-2's agent stalled 3 s (Java and Go consumers)");
        startGoConsumers(NODES, "node-2");
        long faultAt = System.nanoTime();
        Instant faultWall = Instant.now();
        var loss = lab.lossEverywhere(10);
        holdWithoutResets(Set.copyOf(NODES), faultAt, LOSS_WINDOW.dividedBy(2));
        cluster.node("node-2").agent().signal("STOP");
        long stalledAt = System.nanoTime();
        holdWithoutResets(Set.copyOf(NODES), stalledAt, Duration.ofSeconds(3));
        cluster.node("node-2").agent().signal("CONT");
        long stallMillis = (System.nanoTime() - stalledAt) / 1_000_000;
        holdWithoutResets(Set.copyOf(NODES), faultAt, LOSS_WINDOW);
        loss.heal();
        long lossMillis = (System.nanoTime() - faultAt) / 1_000_000;
        // a node that stopped feeding during the window would reset up to one watchdog timeout later
        holdWithoutResets(Set.copyOf(NODES), System.nanoTime(), watchdogTimeout.plus(SLACK));

        assertNoResets(Set.copyOf(NODES), faultAt);
        for (String observer : NODES) {
            for (String member : NODES) {
                if (!member.equals(observer) && !member.equals("node-2")) {
                    assertThat(cluster.node(observer).consumer().first(faultAt, e -> e.isLiveLeftOf(member)))
                            .as("false LEFT of healthy %s at %s's consumer", member, observer).isEmpty();
                    assertThat(goConsumers.get(observer).liveEventsSince(faultWall))
                            .as("false LEFT of healthy %s at %s's Go consumer", member, observer)
                            .doesNotContain("LEFT " + member);
                }
            }
        }
        long stalledLeft = NODES.stream().filter(o -> !o.equals("node-2"))
                .filter(o -> cluster.node(o).consumer().first(faultAt, e -> e.isLiveLeftOf("node-2")).isPresent())
                .count();
        long stalledLeftGo = NODES.stream().filter(o -> !o.equals("node-2"))
                .filter(o -> goConsumers.get(o).liveEventsSince(faultWall).contains("LEFT node-2")).count();
        assertGoConsumersSawTheJavaConsumersLiveEvents(faultAt, faultWall);
        report.add("10% loss on every link, measured", "all", lossMillis, ">= " + LOSS_WINDOW.toMillis())
                .add("agent stalled (SIGSTOP..SIGCONT)", "node-2", stallMillis, ">= 3000")
                .note("resets anywhere", "-", "0")
                .note("false LEFT of healthy nodes", "-", "0")
                .note("consumers that saw the stalled node LEFT", "node-2", String.valueOf(stalledLeft))
                .note("Go consumers that saw the stalled node LEFT", "node-2", String.valueOf(stalledLeftGo))
                .print();
        assertStillFeeding(Set.copyOf(NODES));
    }

    @Test
    void agentRestartedWhileArmedDisarmsCleanlyAndIsNotReset() {
        startFiveArmedAgents(AgentSettings.fastFence());
        ScenarioReport report = new ScenarioReport("agent of node-2 restarted (SIGTERM) while armed");
        AgentNode node = cluster.node("node-2");
        startGoConsumers(List.of("node-2"), "node-1");
        long stopAt = System.nanoTime();
        Instant stopWall = Instant.now();
        int exit = node.agent().terminate(Duration.ofSeconds(20));
        report.note("agent exit code after SIGTERM", "node-2", String.valueOf(exit));
        node.watchdog().await("magic close", l -> l.receivedNanos() >= stopAt && "disarmed".equals(l.text("event")),
                Duration.ofSeconds(5));
        report.add("SIGTERM -> watchdog disarmed", "node-2",
                (node.watchdog().last(l -> "disarmed".equals(l.text("event"))).orElseThrow().receivedNanos() - stopAt)
                        / 1_000_000, "");

        cluster.node("node-2").boot();
        ObservedLine rearmed = node.watchdog().await("re-armed", l -> l.receivedNanos() >= stopAt
                && "armed".equals(l.text("event")), ARM);
        report.add("restart -> watchdog re-armed", "node-2", (rearmed.receivedNanos() - stopAt) / 1_000_000, "");
        // the Go consumer (what Cilium would run) reconnected on its own and resynchronised with GetAll
        Instant resynced = goConsumers.get("node-2").awaitSyncSince(stopWall, MEMBERSHIP);
        report.add("SIGTERM -> Go consumer resynced (GetAll after reconnect)", "node-2",
                Duration.between(stopWall, resynced).toMillis(), "<= " + MEMBERSHIP.toMillis());
        holdWithoutResets(Set.copyOf(NODES), stopAt, watchdogTimeout.plus(SLACK));
        assertNoResets(Set.copyOf(NODES), stopAt);
        assertStillFeeding(Set.copyOf(NODES));
        report.print();
    }

    @Test
    void nodeDisarmedByTheDisableFileIsNotResetWhenIsolated() throws Exception {
        startFiveArmedAgents(AgentSettings.fastFence());
        ScenarioReport report = new ScenarioReport(
                "maintenance by disable file on node-5, then isolation (Java and Go consumers)");
        AgentNode node = cluster.node("node-5");
        List<String> others = List.of("node-1", "node-2", "node-3", "node-4");
        startGoConsumers(others, "node-5");

        long disableAt = System.nanoTime();
        Files.writeString(node.disableFile(), "e2e maintenance window\n");
        ObservedLine disarmed = node.watchdog().await("magic close", l -> l.receivedNanos() >= disableAt
                && "disarmed".equals(l.text("event")), Duration.ofSeconds(10));
        long disarmMillis = (disarmed.receivedNanos() - disableAt) / 1_000_000;
        report.add("disable file -> watchdog disarmed", "node-5", disarmMillis, "<= 3000");
        assertThat(disarmMillis).as("the disable file is noticed within a second (plus slack)").isLessThan(3000);

        long faultAt = System.nanoTime();
        Instant faultWall = Instant.now();
        var isolation = lab.isolate("node-5");
        reportLeftAtBothConsumers(report, Set.copyOf(others), Set.of("node-5"), faultAt, faultWall);
        holdWithoutResets(Set.copyOf(NODES), faultAt, fenceBound().plus(SLACK));
        assertNoResets(Set.copyOf(NODES), faultAt);
        assertGoConsumersSawTheJavaConsumersLiveEvents(faultAt, faultWall);

        long healAt = System.nanoTime();
        isolation.heal();
        Files.delete(node.disableFile());
        ObservedLine rearmed = node.watchdog().await("re-armed", l -> l.receivedNanos() >= healAt
                && "armed".equals(l.text("event")), ARM);
        report.add("heal + file removed -> re-armed", "node-5", (rearmed.receivedNanos() - healAt) / 1_000_000, "")
                .note("resets anywhere", "-", "0")
                .print();
        assertStillFeeding(Set.copyOf(NODES));
    }

    /**
     * Issue 9 item 9: the Critical profile with the shortest accepted watchdog (2 s). An isolated node stops feeding
     * within T_stop and is reset by its watchdog before the instant the majority may treat it as powered off
     * (lastContact + safe-to-assume-fenced delay; lastContact is at most the isolation instant), and the others keep
     * feeding. Prints isolation → stopped feeding, → reset, → LEFT at the majority and → safe-to-assume-fenced.
     */
    @Test
    void criticalProfileWithATwoSecondWatchdogFencesAnIsolatedNodeBeforeSafeToAssumeFenced() {
        startArmedAgents(List.of("node-1", "node-2", "node-3"), AgentSettings.critical());
        Timings timings = cluster.timings("node-1");
        Duration safeDelay = Duration.ofSeconds(timings.getSafeToAssumeFencedDelay().getSeconds(),
                timings.getSafeToAssumeFencedDelay().getNanos());
        assertThat(timings.getProfile()).contains("Critical");
        assertThat(watchdogTimeout).isEqualTo(Duration.ofSeconds(2));
        ScenarioReport report = new ScenarioReport(
                "3 nodes, Critical, 2 s watchdog, one isolated (Java and Go consumers)");
        Set<String> others = Set.of("node-1", "node-2");
        startGoConsumers(others.stream().sorted().toList(), "node-3");

        long faultAt = System.nanoTime();
        Instant faultWall = Instant.now();
        lab.isolate("node-3");
        long resetMillis = awaitReset("node-3", faultAt);
        long lastFeedMillis = cluster.node("node-3").watchdogEvents("feed", faultAt).stream()
                .mapToLong(l -> (l.receivedNanos() - faultAt) / 1_000_000).max().orElse(0);
        report.add("last feed after isolation", "node-3", lastFeedMillis, "<= T_stop " + tStop.toMillis());
        report.add("reset after isolation", "node-3", resetMillis, "< safe-to-assume-fenced " + safeDelay.toMillis());
        reportLeftAtBothConsumers(report, others, Set.of("node-3"), faultAt, faultWall);
        report.add("safe-to-assume-fenced after isolation", "majority", safeDelay.toMillis(),
                "T_stop + watchdog + margin");
        // the reset must come before the majority may assume it; the emulator checks its deadline every 100 ms
        assertThat(resetMillis).as("reset before safe-to-assume-fenced").isLessThan(safeDelay.toMillis() + 100);
        assertThat(lastFeedMillis).as("stopped feeding within T_stop").isLessThanOrEqualTo(tStop.toMillis());
        holdWithoutResets(others, faultAt, safeDelay.plus(SLACK));
        assertNoResets(others, faultAt);
        assertStillFeeding(others);
        assertGoConsumersSawTheJavaConsumersLiveEvents(faultAt, faultWall);
        report.print();
    }

    private long awaitReset(String node, long sinceNanos) {
        return ResetWatch.awaitReset(cluster, node, sinceNanos, fenceBound().plus(Duration.ofSeconds(30)));
    }

    private long awaitLeft(String observer, String gone, long sinceNanos) {
        ConsumedEvent left = cluster.node(observer).consumer().await("LEFT of " + gone, sinceNanos,
                e -> e.isLiveLeftOf(gone), MEMBERSHIP);
        return (left.receivedNanos() - sinceNanos) / 1_000_000;
    }

    /** @return watchdog feeds of {@code node} recorded after {@code sinceNanos} */
    private long feedsSince(String node, long sinceNanos) {
        return cluster.node(node).watchdogEvents("feed", sinceNanos).size();
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

    /** An observation window, not a wait for a condition: lets whatever the fault causes within it happen. */
    private static void observeUntil(long startNanos, Duration window) {
        long left = (startNanos + window.toNanos() - System.nanoTime()) / 1_000_000;
        if (left > 0) {
            try {
                Thread.sleep(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /** Watches {@code nodes} until {@code after} has passed since {@code startNanos}: a reset fails at once. */
    private void holdWithoutResets(Set<String> nodes, long startNanos, Duration after) {
        ResetWatch.holdWithoutResets(cluster, nodes, startNanos, after);
    }
}
