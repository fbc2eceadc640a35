package dev.fencing.e2e.peer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.process.CommandResult;
import dev.fencing.e2e.process.HostCommand;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Go reference peer honours the node jar's contract on its own (Go with Go), so that an interop failure can be
 * blamed on the Java side and not on the harness.
 */
class GoReferencePeerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final long SEED = 3;
    private static PeerLauncher launcher;
    private static ProjectLayout layout;
    private PeerGroup group;

    @BeforeAll
    static void buildPeer() {
        layout = ProjectLayout.fromWorkingDirectory();
        launcher = PeerLauncher.goOnly(layout);
    }

    @AfterEach
    void killPeers() {
        if (group != null) {
            group.close();
        }
    }

    @Test
    void twoGoPeersConvergeExchangeMessagesAndStateAndLeaveGracefully() {
        group = new PeerGroup(launcher, "127.0.0.1", SEED, layout.logDir("go-reference-peer"));
        long start = System.nanoTime();
        GossipPeer a = group.start(PeerKind.GO, "go-a", spec -> spec.withState("state-of-a"));
        GossipPeer b = group.startJoining(PeerKind.GO, "go-b", List.of(a), spec -> spec.withState("state-of-b"));

        PeerGroup.awaitConverged(List.of(a, b), Set.of("go-a", "go-b"), start, TIMEOUT);
        b.awaitRemoteState("state-of-a", TIMEOUT);
        a.awaitRemoteState("state-of-b", TIMEOUT);

        a.sendUserMessage("go-b", "reliable hello", true);
        b.awaitUserMessage("reliable hello", TIMEOUT);
        b.sendUserMessage("go-a", "best-effort hello", false);
        a.awaitUserMessage("best-effort hello", TIMEOUT);

        long leaveAt = System.nanoTime();
        assertThat(b.leave(TIMEOUT)).as("exit code after SIGTERM").isZero();
        a.awaitEvent("leave", "go-b", leaveAt, TIMEOUT);
        a.awaitView("go-b listed dead", leaveAt, v -> v.dead().contains("go-b") && !v.alive().contains("go-b"),
                TIMEOUT);
        assertThat(GoPeerLog.wireComplaints(a.process().stderrLog())).isEmpty();
    }

    @Test
    void anyFreePortMetadataAddressedMessagesAndLeaveCommandWork() {
        group = new PeerGroup(launcher, "127.0.0.1", SEED + 1, layout.logDir("go-reference-peer"));
        GossipPeer a = group.start(PeerKind.GO, "go-a", spec -> spec);
        GossipPeer b = launcher.start(PeerKind.GO, new PeerSpec("go-b", "127.0.0.1", 0, List.of(a.spec().address()),
                "", "local", "", List.of("--meta", "zone=a")), layout.logDir("go-reference-peer"));
        try (b) {
            String bAddress = b.awaitReady(TIMEOUT).text("addr");
            assertThat(bAddress).startsWith("127.0.0.1:").isNotEqualTo("127.0.0.1:0");
            a.awaitView("both", Long.MIN_VALUE, v -> v.alive().equals(Set.of("go-a", "go-b")), TIMEOUT);
            assertThat(a.firstEvent("join", "go-b", Long.MIN_VALUE).orElseThrow().text("meta")).isEqualTo("zone=a");

            b.setMeta("zone=b");
            a.process().await("meta update", l -> "update".equals(l.text("event")) && "zone=b".equals(l.text("meta")),
                    TIMEOUT);
            b.process().writeLine("{\"sendto\":\"" + a.spec().address() + "\",\"msg\":\"by address\"}");
            a.awaitUserMessage("by address", TIMEOUT);

            long leaveAt = System.nanoTime();
            b.process().writeLine("{\"leave\":true}");
            assertThat(b.process().awaitExit(TIMEOUT)).contains(0);
            assertThat(b.lines()).anySatisfy(l -> assertThat(l.text("event")).isEqualTo("shutdown"));
            a.awaitEvent("leave", "go-b", leaveAt, TIMEOUT);
        }
    }

    @Test
    void badCommandLinesAreRejectedWithAMessageThatSaysWhatToChange() {
        assertThat(runPeer("--name", "x", "--label", "grp")).satisfies(r -> {
            assertThat(r.exitCode()).isEqualTo(2);
            assertThat(r.stderr()).contains("memberlist 0.2.2 has no gossip labels");
        });
        assertThat(runPeer("--name", "x", "--key", "c2hvcnQ=")).satisfies(r -> {
            assertThat(r.exitCode()).isEqualTo(2);
            assertThat(r.stderr()).contains("AES needs 16, 24 or 32");
        });
        assertThat(runPeer("--name", "x", "--config", "fast")).satisfies(r -> {
            assertThat(r.exitCode()).isEqualTo(2);
            assertThat(r.stderr()).contains("use lan, wan or local");
        });
        assertThat(runPeer("--name", "x", "--compression", "maybe")).satisfies(r -> {
            assertThat(r.exitCode()).isEqualTo(2);
            assertThat(r.stderr()).contains("want true or false");
        });
        assertThat(runPeer("--port", "7946")).satisfies(r -> {
            assertThat(r.exitCode()).isEqualTo(2);
            assertThat(r.stderr()).contains("--name is required");
        });
    }

    private static CommandResult runPeer(String... args) {
        List<String> command = new ArrayList<>(List.of(launcher.goBinary().toString()));
        command.addAll(List.of(args));
        return HostCommand.run(command, Duration.ofSeconds(10));
    }
}
