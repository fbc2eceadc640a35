package dev.fencing.e2e.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.peer.GossipPeer;
import dev.fencing.e2e.peer.MembersView;
import dev.fencing.e2e.peer.PeerGroup;
import dev.fencing.e2e.peer.PeerKind;
import dev.fencing.e2e.peer.PeerSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Mixed groups of Java nodes and Go memberlist nodes of each version (Debian's 0.2.2, v0.5.4 = Deckhouse's pin, the
 * latest release): configured as Deckhouse's agent configures memberlist (LAN defaults, label = group name, AES key;
 * 0.2.2 without the label it does not have), and the purge of left and dead nodes.
 */
class GoVersionsClusterIT extends GoVersionsFixture {

    private static final Duration CONVERGE = Duration.ofSeconds(40);
    /** LAN config at N=4 with 2 of 4 crashed: suspicion 4..24 s after a failed probe; the worst case plus slack. */
    private static final Duration DETECT = Duration.ofSeconds(60);
    private static final String GROUP = "workers";
    private static final String KEY = "SGVsbG8gZnJvbSB0aGUgZmVuY2luZyBlMmUgc3VpdGU=";
    private static final String VSN = "1,5,2,0,0,0";
    private static final Duration DEAD_TIME = Duration.ofSeconds(5);

    @ParameterizedTest(name = "memberlist {0}")
    @EnumSource(value = PeerKind.class, names = {"GO", "GO_054", "GO_LATEST"})
    void groupConfiguredAsDeckhouseJoinsCarriesMessagesAndDetectsCrashes(PeerKind go) {
        List<String> flags = new ArrayList<>(List.of("--config", "lan"));
        if (go.supportsLabels()) {
            flags.addAll(List.of("--label", GROUP));
        }
        UnaryOperator<PeerSpec> deckhouse = spec -> spec.withKey(KEY).withExtraArgs(flags);
        long start = System.nanoTime();
        List<GossipPeer> all = startChain(go, deckhouse);
        GossipPeer java1 = all.get(0);
        GossipPeer go1 = all.get(1);
        GossipPeer java2 = all.get(2);
        GossipPeer go2 = all.get(3);
        long converged = PeerGroup.awaitConverged(all, PeerGroup.names(all), start, CONVERGE);
        System.out.printf("interop-matrix check=deckhouse-join memberlist=%s converged_ms=%d%n",
                go.memberlistVersion(), converged);

        // Vsn: each side parsed the other's alive as [1,5,2,0,0,0]
        assertThat(java1.awaitEvent("join", "go-1", Long.MIN_VALUE, CONVERGE).text("vsn"))
                .as("go-1's Vsn as java-1 parsed it").isEqualTo(VSN);
        assertThat(go1.awaitEvent("join", "java-1", Long.MIN_VALUE, CONVERGE).text("vsn"))
                .as("java-1's Vsn as go-1 parsed it").isEqualTo(VSN);

        MixedMessages.deliver(java1, go1, "deckhouse java to go, reliable", true);
        MixedMessages.deliver(go1, java1, "deckhouse go to java, reliable", true);
        MixedMessages.deliver(java1, go1, "deckhouse java to go, packet", false);
        MixedMessages.deliver(go1, java1, "deckhouse go to java, packet", false);

        long crashAt = System.nanoTime();
        go2.crash();
        java2.crash();
        for (GossipPeer survivor : List.of(java1, go1)) {
            MembersView view = survivor.awaitView("go-2 and java-2 declared dead", crashAt,
                    v -> !v.notDead().contains("go-2") && !v.notDead().contains("java-2"), DETECT);
            if (survivor.kind().reportsRealStates()) {
                assertThat(view.dead()).as("%s lists the crashed nodes as dead", survivor)
                        .contains("go-2", "java-2");
            }
            System.out.printf("interop-matrix check=deckhouse-crash-detection memberlist=%s observer=%s ms=%d%n",
                    go.memberlistVersion(), survivor.name(), (System.nanoTime() - crashAt) / 1_000_000);
        }
    }

    @ParameterizedTest(name = "memberlist {0}")
    @EnumSource(value = PeerKind.class, names = {"GO", "GO_054", "GO_LATEST"})
    void leftAndDeadNodesArePurgedAfterGossipToTheDeadTime(PeerKind go) {
        UnaryOperator<PeerSpec> fast = spec -> spec.withExtraArgs(List.of("--gossip-to-the-dead-time",
                DEAD_TIME.toSeconds() + "s", "--push-pull-interval", "1s"));
        long start = System.nanoTime();
        List<GossipPeer> all = startChain(go, fast);
        GossipPeer java1 = all.get(0);
        GossipPeer go1 = all.get(1);
        GossipPeer leaver = all.get(2);
        GossipPeer victim = all.get(3);
        PeerGroup.awaitConverged(all, PeerGroup.names(all), start, CONVERGE);

        long departAt = System.nanoTime();
        assertThat(leaver.leave(Duration.ofSeconds(15))).as("java-2 exit code after SIGTERM").isZero();
        victim.crash();
        for (GossipPeer observer : List.of(java1, go1)) {
            if (observer.kind().reportsRealStates()) {
                observer.awaitView("java-2 left", departAt, v -> v.left().contains("java-2"), DETECT);
            }
            observer.awaitView("go-2 dead", departAt, v -> v.dead().contains("go-2"), DETECT);
            if (observer.kind() == PeerKind.GO) {
                // 0.2.2 never reaps left nodes and its API cannot show reaping at all
                System.out.printf("interop-matrix check=purge memberlist=%s observer=%s purged=not-observable%n",
                        go.memberlistVersion(), observer.name());
                continue;
            }
            Predicate<MembersView> purged = v -> !v.departed().contains("java-2") && !v.departed().contains("go-2")
                    && !v.notDead().contains("java-2") && !v.notDead().contains("go-2");
            observer.awaitView("java-2 and go-2 purged", departAt, purged, DETECT);
            System.out.printf("interop-matrix check=purge memberlist=%s observer=%s purged_ms_after_departure=%d "
                    + "(gossip-to-the-dead-time %d s)%n", go.memberlistVersion(), observer.name(),
                    (System.nanoTime() - departAt) / 1_000_000, DEAD_TIME.toSeconds());
        }
        // push/pull every second with the Go node (0.2.2 still holds java-2 as left) never brings them back
        for (int round = 0; round < 5; round++) {
            long since = System.nanoTime();
            MembersView view = java1.awaitView("a later view", since, v -> true, CONVERGE);
            assertThat(view.notDead()).as("java-1's members after the purge").isEqualTo(Set.of("java-1", "go-1"));
            assertThat(view.departed()).as("java-1's departed after the purge").isEmpty();
        }
    }

    /** java-1 (seed) ← go-1 ← java-2 ← go-2, each joining through the one before, all with {@code customize}. */
    private List<GossipPeer> startChain(PeerKind go, UnaryOperator<PeerSpec> customize) {
        GossipPeer java1 = group.start(PeerKind.JAVA, "java-1", customize);
        GossipPeer go1 = group.startJoining(go, "go-1", List.of(java1), customize);
        GossipPeer java2 = group.startJoining(PeerKind.JAVA, "java-2", List.of(go1), customize);
        GossipPeer go2 = group.startJoining(go, "go-2", List.of(java2), customize);
        return List.of(java1, go1, java2, go2);
    }
}
