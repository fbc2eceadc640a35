package dev.fencing.e2e.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.peer.GoPeerLog;
import dev.fencing.e2e.peer.GossipPeer;
import dev.fencing.e2e.peer.PeerGroup;
import dev.fencing.e2e.peer.PeerKind;
import dev.fencing.e2e.peer.PeerSpec;
import dev.fencing.e2e.process.ObservedLine;
import dev.fencing.e2e.process.Pause;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Wire features that differ between memberlist versions, Java nodes against the Go peer built with Debian's 0.2.2,
 * v0.5.4 (Deckhouse's pin) and the latest release: the label header in both directions and its refusals,
 * SkipInboundLabelCheck with the label as GCM associated data, and compound messages over 255 parts. Loopback,
 * {@code local} config.
 */
class GoLabelInteropIT extends GoVersionsFixture {

    private static final Duration CONVERGE = Duration.ofSeconds(30);
    /** More than one compound (at most 255 parts) can carry: proves the sender split and the receiver read them. */
    private static final int MIN_BROADCASTS_RECEIVED = 256;
    private static final Duration REFUSAL = Duration.ofSeconds(20);
    private static final String LABEL = "workers";
    private static final String KEY = "SGVsbG8gZnJvbSB0aGUgZmVuY2luZyBlMmUgc3VpdGU=";
    private static final int MANY_BROADCASTS = 300;

    @ParameterizedTest(name = "memberlist {0}")
    @EnumSource(value = PeerKind.class, names = {"GO_054", "GO_LATEST"})
    void labelHeaderCrossesBothWaysAndAnotherOrNoLabelIsRefused(PeerKind go) {
        UnaryOperator<PeerSpec> labelled = spec -> spec.withExtraArgs(List.of("--label", LABEL));
        GossipPeer java1 = group.start(PeerKind.JAVA, "java-1", labelled);
        // a labelled Go node joins a labelled Java seed, then a labelled Java node joins through the Go node
        GossipPeer go1 = group.startJoining(go, "go-1", List.of(java1), labelled);
        GossipPeer java2 = group.startJoining(PeerKind.JAVA, "java-2", List.of(go1), labelled);
        Set<String> members = Set.of("java-1", "go-1", "java-2");
        PeerGroup.awaitConverged(List.of(java1, go1, java2), members, Long.MIN_VALUE, CONVERGE);

        expectedGoComplaints.add("unacceptable label");
        // another label and no label are refused by the Go node; another label by the Java node
        awaitJoinRefused(group.startJoining(PeerKind.JAVA, "java-other", List.of(go1),
                spec -> spec.withExtraArgs(List.of("--label", "other"))));
        awaitJoinRefused(group.startJoining(PeerKind.JAVA, "java-none", List.of(go1), spec -> spec));
        awaitJoinRefused(group.startJoining(go, "go-other", List.of(java1),
                spec -> spec.withExtraArgs(List.of("--label", "other"))));
        awaitJoinRefused(group.startJoining(go, "go-none", List.of(java1), spec -> spec));
        for (GossipPeer member : List.of(java1, go1, java2)) {
            long since = System.nanoTime();
            assertThat(member.awaitView("a view", since, v -> true, CONVERGE).notDead())
                    .as("%s's members after the refused joins", member).isEqualTo(members);
        }
        assertThat(GoPeerLog.wireComplaints(go1.process().stderrLog())).as("go-1 logs the refusals")
                .anyMatch(line -> line.contains("unacceptable label"));
    }

    @ParameterizedTest(name = "memberlist {0}")
    @EnumSource(value = PeerKind.class, names = {"GO_054", "GO_LATEST"})
    void skipInboundLabelCheckTakesUnlabelledInputAsLabelledOnBothKinds(PeerKind go) {
        expectedGoComplaints.addAll(List.of("unacceptable label", "unexpected double", "Decrypt", "decrypt",
                "Failed to receive", "Failed to decode"));
        List<String> skipping = List.of("--label", LABEL, "--skip-inbound-label-check=true");
        for (PeerKind responderKind : List.of(go, PeerKind.JAVA)) {
            PeerKind dialerKind = responderKind == PeerKind.JAVA ? go : PeerKind.JAVA;
            String prefix = responderKind == PeerKind.JAVA ? "java" : "go";
            // an unlabelled join is taken as labelled
            GossipPeer plainResponder = group.start(responderKind, prefix + "-skip-plain",
                    spec -> spec.withExtraArgs(skipping));
            GossipPeer plainDialer = group.startJoining(dialerKind, prefix + "-dialer-plain", List.of(plainResponder),
                    spec -> spec);
            awaitJoined(plainDialer);
            plainResponder.awaitEvent("join", plainDialer.name(), Long.MIN_VALUE, CONVERGE);
            // a labelled join is a double label and refused
            awaitJoinRefused(group.startJoining(dialerKind, prefix + "-dialer-labelled", List.of(plainResponder),
                    spec -> spec.withExtraArgs(List.of("--label", LABEL))));
            // with encryption the assumed label is the associated data: a sender without the label cannot join
            GossipPeer sealedResponder = group.start(responderKind, prefix + "-skip-sealed",
                    spec -> spec.withKey(KEY).withExtraArgs(skipping));
            awaitJoinRefused(group.startJoining(dialerKind, prefix + "-dialer-sealed-unlabelled",
                    List.of(sealedResponder), spec -> spec.withKey(KEY)));
        }
    }

    @ParameterizedTest(name = "memberlist {0}")
    @EnumSource(value = PeerKind.class, names = {"GO_054", "GO_LATEST"})
    void labelIsTheGcmAssociatedDataOfBothKinds(PeerKind go) {
        UnaryOperator<PeerSpec> sealed = spec -> spec.withKey(KEY).withExtraArgs(List.of("--label", LABEL));
        GossipPeer java1 = group.start(PeerKind.JAVA, "java-1", sealed);
        GossipPeer go1 = group.startJoining(go, "go-1", List.of(java1), sealed);
        GossipPeer java2 = group.startJoining(PeerKind.JAVA, "java-2", List.of(go1), sealed);
        PeerGroup.awaitConverged(List.of(java1, go1, java2), Set.of("java-1", "go-1", "java-2"), Long.MIN_VALUE,
                CONVERGE);
        // both directions of packets and streams authenticate the label: messages cross both ways
        MixedMessages.deliver(go1, java1, "sealed under the label, go to java", true);
        MixedMessages.deliver(java1, go1, "sealed under the label, java to go", true);
        MixedMessages.deliver(go1, java2, "sealed packet, go to java", false);
        MixedMessages.deliver(java2, go1, "sealed packet, java to go", false);
    }

    @ParameterizedTest(name = "memberlist {0}")
    @EnumSource(value = PeerKind.class, names = {"GO", "GO_054", "GO_LATEST"})
    void compoundOfMoreThan255PartsIsSplitSoEveryPartArrives(PeerKind go) {
        GossipPeer java = group.start(PeerKind.JAVA, "java-1", spec -> spec);
        GossipPeer goPeer = group.startJoining(go, "go-1", List.of(java), spec -> spec);
        PeerGroup.awaitConverged(List.of(java, goPeer), Set.of("java-1", "go-1"), Long.MIN_VALUE, CONVERGE);

        // Java -> Go: one gossip round holds ~280 of these; Java splits them into compounds of at most 255
        java.queueBroadcasts(MANY_BROADCASTS);
        int atGo = awaitMostBroadcasts(goPeer, CONVERGE.multipliedBy(2));
        System.out.printf("interop-matrix check=compound>255 direction=java->%s received=%d/%d%n",
                go.memberlistVersion(), atGo, MANY_BROADCASTS);

        long sentAt = System.nanoTime();
        goPeer.queueBroadcasts(MANY_BROADCASTS);
        if (go == PeerKind.GO) {
            // 0.2.2 writes the part count as a uint8 (300 -> 44) and no split: the packet is malformed. Java drops
            // the unreadable parts, keeps running and keeps the Go node as a member.
            java.awaitView("a view after the broken compound", sentAt, v -> true, CONVERGE);
            long received = java.lines().stream().filter(l -> "user".equals(l.text("event"))).count();
            assertThat(java.process().isAlive()).as("java-1 survives 0.2.2's wrapped compound").isTrue();
            PeerGroup.awaitConverged(List.of(java, goPeer), Set.of("java-1", "go-1"), sentAt, CONVERGE);
            System.out.printf("interop-matrix check=compound>255 direction=%s->java received=%d/%d (count byte "
                    + "wraps in 0.2.2)%n", go.memberlistVersion(), received, MANY_BROADCASTS);
        } else {
            int atJava = awaitMostBroadcasts(java, CONVERGE.multipliedBy(2));
            System.out.printf("interop-matrix check=compound>255 direction=%s->java received=%d/%d%n",
                    go.memberlistVersion(), atJava, MANY_BROADCASTS);
        }
    }

    /**
     * Waits until {@code receiver} has more than one full compound's worth (256) of the {@value #MANY_BROADCASTS}
     * distinct broadcasts. Gossip broadcasts are best effort (a few retransmits over UDP, which a loaded machine
     * drops), so not every one must arrive; 256 distinct parts cannot come from a single compound, and a sender that
     * did not split (0.2.2's wrapped count) delivers about 20.
     *
     * @return how many distinct broadcasts arrived
     */
    private static int awaitMostBroadcasts(GossipPeer receiver, Duration timeout) {
        Set<String> expected = new TreeSet<>();
        for (int i = 0; i < MANY_BROADCASTS; i++) {
            String text = Integer.toString(i, 36);
            expected.add(text.length() == 1 ? "0" + text : text);
        }
        java.util.function.IntSupplier received = () -> (int) receiver.lines().stream()
                .filter(l -> "user".equals(l.text("event"))).map(l -> l.text("msg")).filter(expected::contains)
                .distinct().count();
        org.awaitility.Awaitility.await(receiver + " receives most of the broadcasts").atMost(timeout)
                .pollInterval(Duration.ofMillis(200)).until(() -> received.getAsInt() >= MIN_BROADCASTS_RECEIVED);
        // a little longer, for the stragglers' figure in the matrix line
        Pause.sleep(Duration.ofSeconds(2));
        return received.getAsInt();
    }

    private static ObservedLine awaitJoined(GossipPeer joiner) {
        return joiner.process().await(joiner + " joined", line -> "joined".equals(line.text("event")), CONVERGE);
    }

    /** The joiner reports a failed join (it retries every second) and never a successful one. */
    private static void awaitJoinRefused(GossipPeer joiner) {
        joiner.process().await(joiner + " join refused", line -> "error".equals(line.text("event")), REFUSAL);
        assertThat(joiner.lines()).as("%s must not have joined", joiner)
                .noneMatch(line -> "joined".equals(line.text("event")));
    }
}
