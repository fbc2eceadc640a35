package dev.fencing.e2e.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.peer.GoPeerLog;
import dev.fencing.e2e.peer.GossipPeer;
import dev.fencing.e2e.peer.PeerGroup;
import dev.fencing.e2e.peer.PeerKind;
import dev.fencing.e2e.peer.PeerLauncher;
import dev.fencing.e2e.peer.ProjectLayout;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * What the interop ITs against every Go memberlist version share: the three Go peers built once, a fresh loopback
 * {@link PeerGroup} per test (logs under {@code e2e-logs/interop-versions/<test>}), and after each test every peer
 * killed and each Go peer's log checked for what it could not decode, except the complaints a test expects.
 */
abstract class GoVersionsFixture {

    private static ProjectLayout layout;
    private static PeerLauncher launcher;
    /** The peers of the running test. */
    protected PeerGroup group;
    /** Go log complaints the running test provokes on purpose (substrings). */
    protected final List<String> expectedGoComplaints = new ArrayList<>();

    @BeforeAll
    static void buildEveryGoPeer() {
        layout = ProjectLayout.fromWorkingDirectory();
        launcher = PeerLauncher.forHost(layout, EnumSet.of(PeerKind.GO, PeerKind.GO_054, PeerKind.GO_LATEST));
    }

    @BeforeEach
    void newGroup(TestInfo info) {
        String test = info.getTestMethod().orElseThrow().getName() + "-" + Math.abs(info.getDisplayName().hashCode());
        group = new PeerGroup(launcher, "127.0.0.1", test.hashCode(), layout.logDir("interop-versions").resolve(test));
    }

    @AfterEach
    void killEveryPeerAndCheckGoLogs() {
        group.close();
        for (GossipPeer peer : group.peers()) {
            if (peer.kind().isGo()) {
                assertThat(GoPeerLog.wireComplaints(peer.process().stderrLog(), expectedGoComplaints))
                        .as("what the Go peer %s could not decode (log %s)", peer.name(), peer.process().stderrLog())
                        .isEmpty();
            }
        }
    }
}
