package dev.fencing.e2e.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.peer.GoPeerLog;
import dev.fencing.e2e.peer.GossipPeer;
import dev.fencing.e2e.peer.MembersView;
import dev.fencing.e2e.peer.PeerGroup;
import dev.fencing.e2e.peer.PeerKind;
import dev.fencing.e2e.peer.PeerLauncher;
import dev.fencing.e2e.peer.PeerSpec;
import dev.fencing.e2e.peer.ProjectLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Java memberlist nodes and Go hashicorp/memberlist 0.2.2 nodes (Debian's package) in one cluster on loopback, all
 * with memberlist's {@code local} config and compression on (the default of both).
 */
class MixedClusterIT {

    private static final Duration CONVERGE = Duration.ofSeconds(30);
    /** Local config at N=4: suspicion lasts 3..18 s after a failed probe; twice the worst case plus slack. */
    private static final Duration DETECT = Duration.ofSeconds(50);
    private static final String KEY = "SGVsbG8gZnJvbSB0aGUgZmVuY2luZyBlMmUgc3VpdGU=";
    private static final String OTHER_KEY = "T3RoZXIga2V5IG9mIHRoZSBmZW5jaW5nIGUyZSBzdWk=";

    private static ProjectLayout layout;
    private static PeerLauncher launcher;
    private PeerGroup group;
    private final List<String> expectedGoComplaints = new ArrayList<>();
    private final Set<String> exemptFromLogCheck = new TreeSet<>();

    @BeforeAll
    static void locateBothImplementations() {
        layout = ProjectLayout.fromWorkingDirectory();
        launcher = PeerLauncher.forHost(layout);
    }

    @BeforeEach
    void newGroup(TestInfo info) {
        String test = info.getTestMethod().orElseThrow().getName() + "-" + Math.abs(info.getDisplayName().hashCode());
        group = new PeerGroup(launcher, "127.0.0.1", test.hashCode(), layout.logDir("interop").resolve(test));
    }

    @AfterEach
    void killEveryPeerAndCheckGoLogs() {
        group.close();
        for (GossipPeer peer : group.peers()) {
            if (peer.kind() == PeerKind.GO && !exemptFromLogCheck.contains(peer.name())) {
                assertThat(GoPeerLog.wireComplaints(peer.process().stderrLog(), expectedGoComplaints))
                        .as("what the Go peer %s could not decode (log %s)", peer.name(), peer.process().stderrLog())
                        .isEmpty();
            }
        }
    }

    @ParameterizedTest(name = "{0} seed")
    @EnumSource(value = PeerKind.class, names = {"JAVA", "GO"})
    void nodeOfTheOtherKindJoinsThroughTheSeed(PeerKind seedKind) {
        long start = System.nanoTime();
        GossipPeer seed = group.start(seedKind, name(seedKind, 1), spec -> spec);
        GossipPeer joiner = group.startJoining(other(seedKind), name(other(seedKind), 1), List.of(seed), spec -> spec);

        long millis = PeerGroup.awaitConverged(List.of(seed, joiner), PeerGroup.names(List.of(seed, joiner)), start,
                CONVERGE);

        System.out.printf("interop join: %s joins through %s, both list both after %d ms%n", joiner, seed, millis);
    }

    @Test
    void fourNodeClusterConvergesWithJoinsInBothDirections() {
        long start = System.nanoTime();
        GossipPeer java1 = group.start(PeerKind.JAVA, "java-1", spec -> spec);
        GossipPeer go1 = group.startJoining(PeerKind.GO, "go-1", List.of(java1), spec -> spec);
        GossipPeer java2 = group.startJoining(PeerKind.JAVA, "java-2", List.of(go1), spec -> spec);
        GossipPeer go2 = group.startJoining(PeerKind.GO, "go-2", List.of(java2), spec -> spec);

        long millis = PeerGroup.awaitConverged(group.peers(), PeerGroup.names(group.peers()), start, CONVERGE);

        System.out.printf("interop 4-node chain java-1 <- go-1 <- java-2 <- go-2 converged in %d ms%n", millis);
        assertThat(List.of(java1, go1, java2, go2)).allSatisfy(p -> assertThat(p.process().isAlive()).isTrue());
    }

    @ParameterizedTest(name = "{0} node crashes")
    @EnumSource(value = PeerKind.class, names = {"JAVA", "GO"})
    void crashedNodeIsDeclaredDeadByEveryPeerOfBothKinds(PeerKind victimKind) {
        List<GossipPeer> all = startFourNodeCluster(spec -> spec);
        GossipPeer victim = all.stream().filter(p -> p.kind() == victimKind).findFirst().orElseThrow();
        List<GossipPeer> survivors = all.stream().filter(p -> p != victim).toList();

        long crashAt = System.nanoTime();
        victim.crash();

        for (GossipPeer survivor : survivors) {
            long seenAt = survivor.process().await(survivor + " declares " + victim.name() + " dead",
                    line -> line.receivedNanos() >= crashAt && "members".equals(line.text("event"))
                            && !MembersView.from(line).notDead().contains(victim.name()),
                    DETECT).receivedNanos();
            System.out.printf("interop crash: %s (SIGKILL) declared dead by %s after %d ms%n", victim, survivor,
                    (seenAt - crashAt) / 1_000_000);
        }
    }

    @ParameterizedTest(name = "{0} node leaves")
    @EnumSource(value = PeerKind.class, names = {"JAVA", "GO"})
    void gracefulLeaveIsSeenByEveryPeerOfBothKinds(PeerKind leaverKind) {
        List<GossipPeer> all = startFourNodeCluster(spec -> spec);
        GossipPeer leaver = all.stream().filter(p -> p.kind() == leaverKind).findFirst().orElseThrow();

        long leaveAt = System.nanoTime();
        assertThat(leaver.leave(Duration.ofSeconds(15))).as("%s exit code after SIGTERM", leaver).isZero();

        for (GossipPeer survivor : all) {
            if (survivor != leaver) {
                long seenAt = survivor.awaitEvent("leave", leaver.name(), leaveAt, DETECT).receivedNanos();
                survivor.awaitView(leaver.name() + " gone", leaveAt, v -> !v.notDead().contains(leaver.name()),
                        DETECT);
                System.out.printf("interop leave: %s (SIGTERM) seen as left by %s after %d ms%n", leaver, survivor,
                        (seenAt - leaveAt) / 1_000_000);
            }
        }
    }

    @ParameterizedTest(name = "reliable={0}")
    @ValueSource(booleans = {true, false})
    void userMessagesCrossBothWays(boolean reliable) {
        GossipPeer java = group.start(PeerKind.JAVA, "java-1", spec -> spec);
        GossipPeer go = group.startJoining(PeerKind.GO, "go-1", List.of(java), spec -> spec);
        PeerGroup.awaitConverged(List.of(java, go), Set.of("java-1", "go-1"), Long.MIN_VALUE, CONVERGE);

        MixedMessages.deliver(java, go, "from java to go, reliable=" + reliable, reliable);
        MixedMessages.deliver(go, java, "from go to java, reliable=" + reliable, reliable);
    }

    @ParameterizedTest(name = "{0} seed")
    @EnumSource(value = PeerKind.class, names = {"JAVA", "GO"})
    void pushPullStateIsExchangedBothWaysOnJoin(PeerKind seedKind) {
        GossipPeer seed = group.start(seedKind, name(seedKind, 1), spec -> spec.withState("state of the seed"));
        GossipPeer joiner = group.startJoining(other(seedKind), name(other(seedKind), 1), List.of(seed),
                spec -> spec.withState("state of the joiner"));

        joiner.awaitRemoteState("state of the seed", CONVERGE);
        seed.awaitRemoteState("state of the joiner", CONVERGE);
    }

    @Test
    void periodicPushPullCarriesChangedStateBothWays() {
        List<String> fastPushPull = List.of("--push-pull-interval", "1s");
        GossipPeer java = group.start(PeerKind.JAVA, "java-1", spec -> spec.withExtraArgs(fastPushPull));
        GossipPeer go = group.startJoining(PeerKind.GO, "go-1", List.of(java), spec -> spec.withExtraArgs(fastPushPull));
        PeerGroup.awaitConverged(List.of(java, go), Set.of("java-1", "go-1"), Long.MIN_VALUE, CONVERGE);

        java.setState("java state, second version");
        go.setState("go state, second version");

        go.awaitPeriodicRemoteState("java state, second version", CONVERGE);
        java.awaitPeriodicRemoteState("go state, second version", CONVERGE);
    }

    @ParameterizedTest(name = "{0} node updates")
    @EnumSource(value = PeerKind.class, names = {"JAVA", "GO"})
    void metadataUpdateIsSeenByTheOtherKind(PeerKind updaterKind) {
        GossipPeer updater = group.start(updaterKind, name(updaterKind, 1), spec -> spec);
        GossipPeer observer = group.startJoining(other(updaterKind), name(other(updaterKind), 1), List.of(updater),
                spec -> spec);
        PeerGroup.awaitConverged(List.of(updater, observer), PeerGroup.names(List.of(updater, observer)),
                Long.MIN_VALUE, CONVERGE);

        updater.setMeta("zone=b");

        observer.process().await("update of " + updater.name() + " with meta zone=b",
                line -> "update".equals(line.text("event")) && updater.name().equals(line.text("node"))
                        && "zone=b".equals(line.text("meta")), CONVERGE);
    }

    @Test
    void encryptedMixedClusterConvergesAndKeepsOutNodesWithAnotherKey() {
        List<GossipPeer> members = startFourNodeCluster(spec -> spec.withKey(KEY));
        expectedGoComplaints.add("Decrypt packet failed");
        expectedGoComplaints.add("No installed keys could decrypt the message");
        // the intruders themselves cannot read anything the members send them
        exemptFromLogCheck.addAll(Set.of("go-intruder", "go-plaintext"));

        long intrudeAt = System.nanoTime();
        GossipPeer goIntruder = group.startJoining(PeerKind.GO, "go-intruder", List.of(members.get(0)),
                spec -> spec.withKey(OTHER_KEY));
        GossipPeer javaIntruder = group.startJoining(PeerKind.JAVA, "java-intruder", List.of(members.get(1)),
                spec -> spec.withKey(OTHER_KEY));
        GossipPeer plaintext = group.startJoining(PeerKind.GO, "go-plaintext", List.of(members.get(2)), spec -> spec);

        // five membership rounds later, the encrypted members still list exactly themselves
        for (GossipPeer member : members) {
            for (int round = 0; round < 5; round++) {
                long since = System.nanoTime();
                assertThat(member.awaitView("a view", since, v -> true, CONVERGE).notDead())
                        .as("%s's view after intruders tried to join", member)
                        .isEqualTo(PeerGroup.names(members));
            }
        }
        for (GossipPeer intruder : List.of(goIntruder, javaIntruder, plaintext)) {
            assertThat(intruder.awaitView("own view", intrudeAt, v -> true, CONVERGE).notDead())
                    .as("%s's view", intruder).containsExactly(intruder.name());
        }
    }

    @Test
    void largeCompressibleMessagesCrossBothWays() {
        GossipPeer java = group.start(PeerKind.JAVA, "java-1", spec -> spec);
        GossipPeer go = group.startJoining(PeerKind.GO, "go-1", List.of(java), spec -> spec);
        PeerGroup.awaitConverged(List.of(java, go), Set.of("java-1", "go-1"), Long.MIN_VALUE, CONVERGE);

        // Go compresses every packet and stream with LZW when compression is on: these only arrive intact if the
        // Java side decodes Go's LZW, and the reverse direction exercises whatever the Java node sends.
        String stream = "fencing ".repeat(2048) + "end";
        String packet = "quorum ".repeat(140) + "end";
        MixedMessages.deliver(go, java, stream, true);
        MixedMessages.deliver(java, go, stream, true);
        MixedMessages.deliver(go, java, packet, false);
        MixedMessages.deliver(java, go, packet, false);
    }

    @ParameterizedTest(name = "compression off on the {0} node")
    @EnumSource(value = PeerKind.class, names = {"JAVA", "GO"})
    void nodeWithCompressionOffInteroperatesWithOneThatCompresses(PeerKind plainKind) {
        GossipPeer plain = group.start(plainKind, name(plainKind, 1),
                spec -> spec.withExtraArgs(List.of("--compression=false")));
        GossipPeer compressing = group.startJoining(other(plainKind), name(other(plainKind), 1), List.of(plain),
                spec -> spec);
        PeerGroup.awaitConverged(List.of(plain, compressing), PeerGroup.names(List.of(plain, compressing)),
                Long.MIN_VALUE, CONVERGE);

        String text = "lzw ".repeat(300) + "end";
        MixedMessages.deliver(plain, compressing, text, false);
        MixedMessages.deliver(compressing, plain, text, false);
        MixedMessages.deliver(plain, compressing, text, true);
        MixedMessages.deliver(compressing, plain, text, true);
    }

    private List<GossipPeer> startFourNodeCluster(UnaryOperator<PeerSpec> c) {
        long start = System.nanoTime();
        GossipPeer java1 = group.start(PeerKind.JAVA, "java-1", c);
        GossipPeer go1 = group.startJoining(PeerKind.GO, "go-1", List.of(java1), c);
        GossipPeer java2 = group.startJoining(PeerKind.JAVA, "java-2", List.of(go1), c);
        GossipPeer go2 = group.startJoining(PeerKind.GO, "go-2", List.of(java2), c);
        List<GossipPeer> all = List.of(java1, go1, java2, go2);
        PeerGroup.awaitConverged(all, PeerGroup.names(all), start, CONVERGE);
        return all;
    }

    private static PeerKind other(PeerKind kind) {
        return kind == PeerKind.JAVA ? PeerKind.GO : PeerKind.JAVA;
    }

    private static String name(PeerKind kind, int index) {
        return kind.name().toLowerCase(Locale.ROOT) + "-" + index;
    }
}
