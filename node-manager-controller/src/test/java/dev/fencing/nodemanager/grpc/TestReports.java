package dev.fencing.nodemanager.grpc;

import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import java.time.Duration;
import java.util.Collection;
import java.util.Set;

/** Agent reports as a group of armed agents sends them, for operator tests. */
public final class TestReports {

    private TestReports() {
    }

    /**
     * The report of {@code self}: armed, Watchdog, quorum held, confirming every member but {@code unheard}, which
     * it last heard {@code sinceUnheard} ago.
     */
    public static AgentMessage armedHearing(String self, Collection<String> members, Set<String> unheard,
                                            Duration sinceUnheard) {
        AgentReport.Builder r = AgentReport.newBuilder().setArmed(true).setQuorumHeld(true)
                .setConfirmed(members.size() - unheard.size()).setMode(FencingMode.FENCING_MODE_WATCHDOG);
        for (String peer : members) {
            if (peer.equals(self)) {
                continue;
            }
            boolean down = unheard.contains(peer);
            Duration since = down ? sinceUnheard : Duration.ZERO;
            r.addPeers(PeerReport.newBuilder().setName(peer).setConfirmed(!down)
                    .setSinceLastHeard(com.google.protobuf.Duration.newBuilder().setSeconds(since.getSeconds())
                            .setNanos(since.getNano())));
        }
        return AgentMessage.newBuilder().setReport(r).build();
    }
}
