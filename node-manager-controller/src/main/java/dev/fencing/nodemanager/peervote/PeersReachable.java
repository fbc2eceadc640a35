package dev.fencing.nodemanager.peervote;

import dev.fencing.nodemanager.report.ReceivedReport;
import dev.fencing.policy.DurationFormat;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The Node condition {@code FencingPeersReachable}, pure: the group's agents vote on whether they hear a node
 * (SuperEdge's peer-voted health), so a node the control plane lost but its peers still hear is visibly alive.
 *
 * <p>Voters are the other expected members whose latest report is fresh (younger than the staleness window). A
 * voter hears the node when its report confirms a round trip to it, or heard from it within the quorum window. With
 * fewer voters than a majority of the other members the vote is {@code Unknown} ({@code TooFewReports}); otherwise
 * {@code True} ({@code MajorityHears}) when more than half of the voters hear it, {@code False}
 * ({@code MajorityLost}) when more than half do not, and {@code Unknown} ({@code SplitVote}) on a tie.
 */
public final class PeersReachable {

    /** Node condition type. */
    public static final String TYPE = "FencingPeersReachable";

    /**
     * One node's vote.
     *
     * @param status  True, False or Unknown
     * @param reason  MajorityHears, MajorityLost, SplitVote or TooFewReports
     * @param message the counts, for humans
     */
    public record Vote(String status, String reason, String message) {

        /** Checks presence. */
        public Vote {
            Objects.requireNonNull(status, "status");
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(message, "message");
        }
    }

    private PeersReachable() {
    }

    /**
     * @param node         the node voted on
     * @param expected     the group's expected members (the node included)
     * @param fresh        the fresh reports of expected members, by node
     * @param quorumWindow how recently a voter must have heard the node
     */
    public static Vote of(String node, Set<String> expected, Map<String, ReceivedReport> fresh,
                          Duration quorumWindow) {
        int others = expected.size() - (expected.contains(node) ? 1 : 0);
        int needed = others / 2 + 1;
        int voters = 0;
        int hear = 0;
        for (Map.Entry<String, ReceivedReport> e : fresh.entrySet()) {
            if (e.getKey().equals(node) || !expected.contains(e.getKey())) {
                continue;
            }
            voters++;
            if (hears(e.getValue(), node, quorumWindow)) {
                hear++;
            }
        }
        String counts = hear + " of " + voters + " reporting peers heard " + node + " within the quorum window "
                + DurationFormat.format(quorumWindow) + " (" + others + " other members in the group)";
        if (voters < needed) {
            return new Vote("Unknown", "TooFewReports", counts + "; " + needed + " reports needed to vote");
        }
        int lost = voters - hear;
        if (hear * 2 > voters) {
            return new Vote("True", "MajorityHears", counts);
        }
        if (lost * 2 > voters) {
            return new Vote("False", "MajorityLost", counts);
        }
        return new Vote("Unknown", "SplitVote", counts);
    }

    private static boolean hears(ReceivedReport voter, String node, Duration quorumWindow) {
        for (PeerReport peer : voter.report().getPeersList()) {
            if (!peer.getName().equals(node)) {
                continue;
            }
            if (peer.getConfirmed()) {
                return true;
            }
            if (peer.hasSinceLastHeard()) {
                Duration since = Duration.ofSeconds(peer.getSinceLastHeard().getSeconds(),
                        peer.getSinceLastHeard().getNanos());
                return since.compareTo(quorumWindow) <= 0;
            }
            return false;
        }
        return false;
    }
}
