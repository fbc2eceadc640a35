package dev.fencing.e2e.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentLauncher;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.CommandResult;
import dev.fencing.e2e.process.HostCommand;
import dev.fencing.proto.fencing.v1.Timings;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Issue 14.2 end to end: real agents in network namespaces sharing one loop device (namespaces do not isolate block
 * devices) prepared by ClusterLabs' {@code sbd create}. An even 2+2 split with tie-breakers [Disk] leaves exactly one
 * side; a node cut from the network stops feeding on the disk's evidence; {@code sbd message NODE reset} fences a
 * healthy node. Prints the timings for bench/REPORT.md and the {@code sbd list} of the lab device.
 */
class DiskArbiterIT {

    private static final Path SBD = Path.of("/usr/sbin/sbd");
    private static final Duration ARM = Duration.ofSeconds(120);
    private static final Duration SLACK = Duration.ofSeconds(3);

    private static ProjectLayout layout;
    private static AgentLauncher launcher;
    private NetnsLab lab;
    private AgentCluster cluster;
    private String loop;
    private Duration tStop;
    private Duration watchdogTimeout;
    private String test;

    @BeforeAll
    static void locateAgent() {
        layout = ProjectLayout.fromWorkingDirectory();
        launcher = AgentLauncher.locate(layout);
    }

    @BeforeEach
    void prepareDisk(TestInfo info) throws Exception {
        assumeTrue(Files.isExecutable(SBD), "needs the sbd tool (apt-get install sbd), not installed here");
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root for loop devices and namespaces");
        test = info.getTestMethod().orElseThrow().getName();
        Path image = Files.createDirectories(layout.e2eTarget().resolve("disk-lab")).resolve(test + ".img");
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(8L << 20);
        }
        loop = run("losetup", "-f", "--show", image.toString()).trim();
        // watchdog 6 s as the agents' devices, allocate 1 s, msgwait 2 s (sbd message returns 2 s after writing):
        // shorter than the agents need, which they flag; these tests wait for the resets rather than for msgwait
        run(SBD.toString(), "-d", loop, "-1", "6", "-2", "1", "-4", "2", "create");
    }

    @AfterEach
    void tearDown() {
        if (cluster != null) {
            cluster.close();
        }
        if (lab != null) {
            lab.close();
        }
        if (loop != null) {
            run("losetup", "-d", loop);
        }
    }

    private void startArmed(List<String> nodes, List<String> tieBreakers) {
        startArmed(nodes, AgentSettings.fastFence().withDisk(tieBreakers, loop));
    }

    private void startArmed(List<String> nodes, AgentSettings settings) {
        lab = NetnsLab.create(nodes);
        Path logs = layout.logDir("scenarios").resolve(test + "-" + lab.runId());
        cluster = AgentCluster.start(lab, launcher, "workers", settings,
                layout.e2eTarget().resolve("agent-lab").resolve(lab.runId()), logs);
        long armed = cluster.awaitAllArmed(ARM);
        for (String node : nodes) {
            // "ok, but msgwait 2s is shorter …": the lab's short msgwait is flagged, the disk is usable
            cluster.node(node).awaitStatus("disk ok", s -> s.getDiskCondition().startsWith("ok"),
                    Duration.ofSeconds(30));
        }
        Timings timings = cluster.timings(nodes.get(0));
        tStop = Duration.ofSeconds(timings.getTStop().getSeconds(), timings.getTStop().getNanos());
        watchdogTimeout = Duration.ofSeconds(timings.getWatchdogTimeout().getSeconds(),
                timings.getWatchdogTimeout().getNanos());
        System.out.printf("%s: %d agents armed after %d ms, every slot on %s; T_stop=%d ms (logs %s)%n", test,
                nodes.size(), armed, loop, tStop.toMillis(), logs);
    }

    @Test
    void anEvenSplitWithTheDiskTieBreakerLeavesExactlyOneSide() throws Exception {
        // four JVMs and emulators starting on a loaded machine: a 3 s window rides out start-up stalls
        startArmed(List.of("node-1", "node-2", "node-3", "node-4"), AgentSettings.fastFence()
                .withTiming("quorumWindow", "3s").withTiming("armingDelay", "3s").withDisk(List.of("Disk"), loop));
        String list = run(SBD.toString(), "-d", loop, "list");
        System.out.printf("sbd -d %s list%n%s", loop, list);
        assertThat(list).contains("node-1\tclear").contains("node-4\tclear");
        ScenarioReport report = new ScenarioReport("4 nodes, 2+2 split, tieBreakers [Disk] on a shared loop device");
        Set<String> winners = Set.of("node-1", "node-2");
        Set<String> losers = Set.of("node-3", "node-4");

        long faultAt = System.nanoTime();
        lab.partition(winners, losers);
        for (String node : losers) {
            report.add("reset after the split", node, awaitReset(node, faultAt), "<= " + fenceBound().toMillis());
        }
        holdWithoutResets(winners, faultAt, fenceBound().plus(SLACK));
        for (String node : winners) {
            assertThat(cluster.node(node).status().orElseThrow().getTieBreakerOutcome()).contains("Disk");
        }
        report.note("resets on the side holding the disk lease", "node-1, node-2", "0").print();
    }

    @Test
    void aNodeCutFromTheNetworkStopsOnTheDiskEvidence() throws Exception {
        startArmed(List.of("node-1", "node-2", "node-3"), List.of("LowestName"));
        ScenarioReport report = new ScenarioReport("3 nodes, node-3 isolated from the network, shared disk");
        long faultAt = System.nanoTime();
        lab.isolate("node-3");
        var fencing = cluster.node("node-3").awaitStatus("fencing", s -> s.getFencingInProgress(),
                fenceBound());
        long seen = (System.nanoTime() - faultAt) / 1_000_000;
        report.add("fencing seen in status after isolation", "node-3", seen, "T_stop " + tStop.toMillis());
        report.add("last feed after isolation", "node-3", lastFeedMillis("node-3", faultAt),
                "feed every " + AgentSettings.fastFence().timings().get("feedInterval"));
        report.add("reset after isolation", "node-3", awaitReset("node-3", faultAt),
                "<= " + fenceBound().toMillis());
        report.note("reason", "node-3", fencing.getTieBreakerOutcome());
        assertThat(fencing.getTieBreakerOutcome()).startsWith("disk: cut off");
        holdWithoutResets(Set.of("node-1", "node-2"), faultAt, fenceBound().plus(SLACK));
        report.print();
    }

    @Test
    void aPoisonPillFromSbdFencesAHealthyNode() throws Exception {
        startArmed(List.of("node-1", "node-2", "node-3"), List.of("LowestName"));
        ScenarioReport report = new ScenarioReport("3 nodes, sbd -d DEV message node-2 reset");
        long sentAt = System.nanoTime();
        Process message = new ProcessBuilder(SBD.toString(), "-d", loop, "message", "node-2", "reset")
                .redirectErrorStream(true).start();
        var fencing = cluster.node("node-2").awaitStatus("fencing", s -> s.getFencingInProgress(),
                Duration.ofSeconds(10));
        report.add("fencing seen in status after sbd message reset", "node-2", (System.nanoTime() - sentAt) / 1_000_000,
                "");
        report.add("last feed after sbd message reset", "node-2", lastFeedMillis("node-2", sentAt),
                "feed every " + AgentSettings.fastFence().timings().get("feedInterval"));
        report.add("reset after sbd message reset", "node-2", awaitReset("node-2", sentAt),
                "<= watchdog " + watchdogTimeout.plus(SLACK).toMillis());
        report.note("disk condition", "node-2", fencing.getDiskCondition());
        assertThat(fencing.getDiskCondition()).startsWith("poison pill: reset from");
        assertThat(message.waitFor(30, TimeUnit.SECONDS)).isTrue();
        holdWithoutResets(Set.of("node-1", "node-3"), sentAt, watchdogTimeout.plus(SLACK));
        String list = run(SBD.toString(), "-d", loop, "list");
        System.out.printf("sbd -d %s list%n%s", loop, list);
        assertThat(list).contains("node-2\treset");
        report.print();
    }

    private Duration fenceBound() {
        return tStop.plus(watchdogTimeout).plus(SLACK);
    }

    private long lastFeedMillis(String node, long sinceNanos) {
        return cluster.node(node).watchdogEvents("feed", sinceNanos).stream()
                .mapToLong(l -> (l.receivedNanos() - sinceNanos) / 1_000_000).max().orElse(0);
    }

    private long awaitReset(String node, long sinceNanos) {
        return ResetWatch.awaitReset(cluster, node, sinceNanos, fenceBound().plus(Duration.ofSeconds(30)));
    }

    private void holdWithoutResets(Set<String> nodes, long startNanos, Duration after) {
        ResetWatch.holdWithoutResets(cluster, nodes, startNanos, after);
    }

    private static String run(String... command) {
        CommandResult result = HostCommand.run(List.of(command), Duration.ofSeconds(30));
        if (!result.ok()) {
            throw new IllegalStateException(String.join(" ", command) + ": exit " + result.exitCode() + ": "
                    + result.stdout() + result.stderr());
        }
        return result.stdout();
    }
}
