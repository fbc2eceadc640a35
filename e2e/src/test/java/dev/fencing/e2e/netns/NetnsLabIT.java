package dev.fencing.e2e.netns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.HostCommand;
import dev.fencing.e2e.process.JsonLinesProcess;
import dev.fencing.e2e.process.ObservedLine;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** The network-namespace harness itself: connectivity, each fault kind, and that nothing outlives a lab. */
class NetnsLabIT {

    private final Path logs = ProjectLayout.fromWorkingDirectory().logDir("netns-lab");
    private NetnsLab lab;

    @AfterEach
    void tearDown() {
        if (lab != null) {
            lab.close();
        }
    }

    @Test
    void udpFlowsBothWaysBetweenTwoNamespaces() {
        lab = NetnsLab.create(List.of("a", "b"));
        ProbeEndpoint a = ProbeEndpoint.start(lab, "a", logs);
        ProbeEndpoint b = ProbeEndpoint.start(lab, "b", logs);

        a.ping(b, 50);
        b.ping(a, 50);

        awaitCount("pings a->b", () -> b.pingsFrom(a), 50);
        awaitCount("pongs b->a", () -> a.pongsFrom(b), 50);
        awaitCount("pings b->a", () -> a.pingsFrom(b), 50);
        awaitCount("pongs a->b", () -> b.pongsFrom(a), 50);
        assertThat(lab.node("a").address()).startsWith("198.18.");
    }

    @Test
    void partitionDropsTrafficBetweenSidesOnlyAndHealRestoresIt() {
        lab = NetnsLab.create(List.of("a", "b", "c"));
        ProbeEndpoint a = ProbeEndpoint.start(lab, "a", logs);
        ProbeEndpoint b = ProbeEndpoint.start(lab, "b", logs);
        ProbeEndpoint c = ProbeEndpoint.start(lab, "c", logs);

        Fault partition = lab.partition(Set.of("a"), Set.of("b", "c"));
        a.ping(b, 20);
        b.ping(a, 20);
        b.ping(c, 20);

        assertThat(b.pingsFrom(a)).as("a->b across the partition").isZero();
        assertThat(a.pingsFrom(b)).as("b->a across the partition").isZero();
        awaitCount("b->c on the same side", () -> c.pingsFrom(b), 20);
        awaitCount("c->b on the same side", () -> b.pongsFrom(c), 20);

        partition.heal();
        a.ping(b, 20);
        awaitCount("a->b after heal", () -> b.pingsFrom(a), 20);
        awaitCount("b->a after heal", () -> a.pongsFrom(b), 20);
    }

    @Test
    void aSecondBridgeCarriesItsOwnNetworkAndPartitionsCutOneOrEveryNetwork() {
        lab = NetnsLab.create(List.of("a", "b"), 2);
        assertThat(lab.networkCidr(1)).isEqualTo("198.19.0.0/24");
        assertThat(lab.address("b", 1)).isEqualTo("198.19.0.11");
        ProbeEndpoint a0 = ProbeEndpoint.start(lab, "a", logs, 0);
        ProbeEndpoint b0 = ProbeEndpoint.start(lab, "b", logs, 0);
        ProbeEndpoint a1 = ProbeEndpoint.start(lab, "a", logs, 1);
        ProbeEndpoint b1 = ProbeEndpoint.start(lab, "b", logs, 1);
        a1.ping(b1, 20);
        awaitCount("a->b on the second network", () -> b1.pingsFrom(a1), 20);
        awaitCount("b->a on the second network", () -> a1.pongsFrom(b1), 20);

        try (Fault cut = lab.isolateOn(1, "a")) {
            a1.ping(b1, 20);
            a0.ping(b0, 20);
            assertThat(b1.pingsFrom(a1)).as("second network cut: 20 before, none now").isEqualTo(20);
            awaitCount("first network untouched", () -> b0.pingsFrom(a0), 20);
            assertThat(cut.description()).contains("network 1");
        }
        try (Fault cut = lab.partition(Set.of("a"), Set.of("b"))) {
            a1.ping(b1, 20);
            a0.ping(b0, 20);
            assertThat(b1.pingsFrom(a1)).as("a full partition cuts the second network").isEqualTo(20);
            assertThat(b0.pingsFrom(a0)).as("and the first").isEqualTo(20);
        }
        a1.ping(b1, 20);
        awaitCount("healed", () -> b1.pingsFrom(a1), 40);
        assertThatThrownBy(() -> lab.address("a", 2)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void oneWayCutDropsOnlyOneDirection() {
        lab = NetnsLab.create(List.of("a", "b"));
        ProbeEndpoint a = ProbeEndpoint.start(lab, "a", logs);
        ProbeEndpoint b = ProbeEndpoint.start(lab, "b", logs);

        try (Fault cut = lab.cutOutbound("a")) {
            a.ping(b, 20);
            b.ping(a, 20);
            assertThat(b.pingsFrom(a)).as("a cannot send").isZero();
            awaitCount("a still receives", () -> a.pingsFrom(b), 20);
            assertThat(b.pongsFrom(a)).as("a's replies are lost").isZero();
            assertThat(cut.description()).contains("a cannot send");
        }
        try (Fault cut = lab.cutInbound("a")) {
            a.ping(b, 20);
            awaitCount("a can send: 0 before + 20 now", () -> b.pingsFrom(a), 20);
            assertThat(a.pongsFrom(b)).as("a cannot receive b's replies").isZero();
            assertThat(cut.description()).contains("a cannot receive");
        }
    }

    @Test
    void lossRuleDropsRoughlyTheConfiguredFraction() {
        lab = NetnsLab.create(List.of("a", "b"));
        ProbeEndpoint a = ProbeEndpoint.start(lab, "a", logs);
        ProbeEndpoint b = ProbeEndpoint.start(lab, "b", logs);

        lab.loss("b", 30);
        a.ping(b, 1000);

        int received = b.pingsFrom(a);
        System.out.printf("loss rule 30%%: %d of 1000 pings arrived (expected about 700)%n", received);
        assertThat(received).as("30% loss of 1000 pings (sigma about 15)").isBetween(550, 850);
        assertThat(lab.rules("b")).contains("numgen random mod 100 < 30");
        lab.healAll();
        assertThat(lab.rules("b")).doesNotContain("numgen");
    }

    @Test
    void stalledProcessAnswersNothingUntilContinued() {
        lab = NetnsLab.create(List.of("a", "b"));
        ProbeEndpoint a = ProbeEndpoint.start(lab, "a", logs);
        ProbeEndpoint b = ProbeEndpoint.start(lab, "b", logs);

        b.process().signal("STOP");
        a.ping(b, 10);
        assertThat(a.pongsFrom(b)).as("no replies from a stopped process").isZero();
        b.process().signal("CONT");
        a.ping(b, 10);
        // the 10 pings queued in b's socket while stopped are answered too once it runs again
        Awaitility.await("replies after SIGCONT").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(a.pongsFrom(b)).as("replies after SIGCONT").isGreaterThanOrEqualTo(10));
    }

    @Test
    void teardownKillsProcessesAndRemovesEveryNamespace() {
        lab = NetnsLab.create(List.of("a", "b", "c"));
        String runId = lab.runId();
        ProbeEndpoint a = ProbeEndpoint.start(lab, "a", logs);
        List<String> namespaces = lab.namespaces();
        assertThat(LabRuns.namespacesOf(runId)).containsExactlyInAnyOrderElementsOf(namespaces);
        assertThat(Files.exists(LabRuns.OWNERS.resolve(runId))).isTrue();

        lab.close();

        assertThat(a.process().awaitExit(Duration.ofSeconds(10))).as("probe process ended").isPresent();
        assertThat(LabRuns.namespacesOf(runId)).isEmpty();
        assertThat(Files.exists(LabRuns.OWNERS.resolve(runId))).isFalse();
        assertThat(Files.exists(Path.of("/run/netns", namespaces.get(0)))).isFalse();
    }

    @Test
    void crashKillsEveryProcessOfTheNode() {
        lab = NetnsLab.create(List.of("a", "b"));
        ProbeEndpoint a = ProbeEndpoint.start(lab, "a", logs);
        ProbeEndpoint b = ProbeEndpoint.start(lab, "b", logs);

        assertThat(lab.crash("a")).isEqualTo(1);

        assertThat(a.process().awaitExit(Duration.ofSeconds(10))).isPresent();
        assertThat(b.process().isAlive()).isTrue();
    }

    @Test
    void sweeperRemovesLeftoversOfAnAbortedRunButNotLiveLabs(TestInfo info) throws Exception {
        lab = NetnsLab.create(List.of("a"));
        String abandoned = "zz" + Long.toString(System.nanoTime() % 10_000, 36);
        String ns = LabRuns.PREFIX + abandoned + "-0";
        // an aborted run: its owner file names a process that no longer exists
        Files.writeString(LabRuns.OWNERS.resolve(abandoned), "999999999 1\n", StandardCharsets.UTF_8);
        HostCommand.check(List.of("ip", "netns", "add", ns), Duration.ofSeconds(10));
        Process orphan = new ProcessBuilder("ip", "netns", "exec", ns, "sleep", "300").start();

        Set<String> swept = LabRuns.sweepAbandoned();

        assertThat(swept).as(info.getDisplayName()).contains(abandoned).doesNotContain(lab.runId());
        assertThat(LabRuns.namespacesOf(abandoned)).isEmpty();
        assertThat(orphan.waitFor(10, TimeUnit.SECONDS)).as("orphan killed").isTrue();
        assertThat(Files.exists(LabRuns.OWNERS.resolve(abandoned))).isFalse();
        assertThat(LabRuns.namespacesOf(lab.runId())).hasSize(2);
    }

    @Test
    void shutdownHookRemovesTheLabWhenTheJvmDiesOfAFailure() {
        try (JsonLinesProcess child = startAbandoningJvm("fail")) {
            ObservedLine created = child.await("lab created", l -> "lab".equals(l.text("event")), Duration.ofSeconds(60));
            String runId = created.text("run");
            long sleeper = created.json().path("pid").asLong();

            assertThat(child.awaitExit(Duration.ofSeconds(60))).as("child JVM exit code").contains(1);

            assertThat(LabRuns.namespacesOf(runId)).as("namespaces of run %s", runId).isEmpty();
            assertThat(ProcessHandle.of(sleeper).map(ProcessHandle::isAlive)).as("process inside the lab")
                    .isEmpty();
            assertThat(Files.exists(LabRuns.OWNERS.resolve(runId))).as("owner file").isFalse();
        }
    }

    @Test
    void sweeperRemovesTheLabOfAKilledJvm() {
        try (JsonLinesProcess child = startAbandoningJvm("hang")) {
            ObservedLine created = child.await("lab created", l -> "lab".equals(l.text("event")), Duration.ofSeconds(60));
            String runId = created.text("run");
            long sleeper = created.json().path("pid").asLong();

            child.kill();
            assertThat(LabRuns.namespacesOf(runId)).as("SIGKILL leaves the lab behind").hasSize(3);

            assertThat(LabRuns.sweepAbandoned()).contains(runId);

            assertThat(LabRuns.namespacesOf(runId)).isEmpty();
            Awaitility.await("process inside the killed lab").atMost(Duration.ofSeconds(10))
                    .until(() -> ProcessHandle.of(sleeper).map(p -> !p.isAlive()).orElse(true));
        }
    }

    /**
     * Waits (at most 10 s) until {@code count} is exactly {@code expected}: ping() returns a fixed 300 ms after the
     * last send, and on a loaded machine a packet can still be unread then. Counts that must stay where they are
     * (zero, or unchanged across a cut) are read at once instead: those 300 ms are what a packet that wrongly got
     * through would have had to arrive.
     */
    private static void awaitCount(String what, IntSupplier count, int expected) {
        Awaitility.await(what).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(count.getAsInt()).as(what).isEqualTo(expected));
    }

    private JsonLinesProcess startAbandoningJvm(String mode) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return JsonLinesProcess.start("abandoning-" + mode, List.of(java, "-Xmx64m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                AbandoningLabMain.class.getName(), mode, logs.toString()), logs);
    }

    @Test
    void partitionRejectsOverlappingSides() {
        lab = NetnsLab.create(List.of("a", "b"));
        assertThatThrownBy(() -> lab.partition(Set.of("a"), Set.of("a", "b")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("disjoint");
    }
}
