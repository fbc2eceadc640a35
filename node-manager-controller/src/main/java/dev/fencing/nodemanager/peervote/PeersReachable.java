package dev.fencing.nodemanager.peervote;

import dev.fencing.nodemanager.report.ReceivedReport;
import dev.fencing.policy.DurationFormat;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import io.fabric8.kubernetes.api.model.Node;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

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
     * One node's vote.
     *
     * @param node         the node voted on
     * @param expected     the group's expected members (the node included)
     * @param fresh        the fresh reports of expected members, by node
     * @param quorumWindow how recently a voter must have heard the node
     */
    public static Vote of(String node, Set<String> expected, Map<String, ReceivedReport> fresh,
                          Duration quorumWindow) {
        return all(expected, fresh, quorumWindow).get(node);
    }

    /**
     * Every expected member's vote, in one pass over the reports: O(members × peers per report), not a scan of
     * every report per member.
     */
    public static Map<String, Vote> all(Set<String> expected, Map<String, ReceivedReport> fresh,
                                        Duration quorumWindow) {
        Map<String, Integer> heard = new HashMap<>();
        int reporting = 0;
        for (Map.Entry<String, ReceivedReport> e : fresh.entrySet()) {
            if (!expected.contains(e.getKey())) {
                continue;
            }
            reporting++;
            for (PeerReport peer : e.getValue().report().getPeersList()) {
                if (!peer.getName().equals(e.getKey()) && expected.contains(peer.getName())
                        && hears(peer, quorumWindow)) {
                    heard.merge(peer.getName(), 1, Integer::sum);
                }
            }
        }
        Map<String, Vote> out = new TreeMap<>();
        for (String node : expected) {
            // Every fresh report but the node's own is a vote; a report that does not name the node votes "not heard".
            int count = reporting - (fresh.containsKey(node) ? 1 : 0);
            out.put(node, vote(node, expected.size() - 1, count, heard.getOrDefault(node, 0), quorumWindow));
        }
        return out;
    }

    /**
     * The patch for a Node that gets no vote any more (fencing off, the group's spec invalid or the group deleted,
     * the node no longer an expected member): {@code Unknown}, reason {@code NotVoted}, so that a {@code True} from
     * before does not keep saying "its peers hear it". Empty when the Node does not carry the condition (it never
     * gets one) or already says so.
     */
    public static Optional<List<Map<String, Object>>> withdrawal(Node node, String why, Instant now) {
        boolean carries = node.getStatus() != null && node.getStatus().getConditions() != null
                && node.getStatus().getConditions().stream().anyMatch(c -> TYPE.equals(c.getType()));
        return carries ? NodeConditionPatch.of(node, TYPE, notVoted(why), now) : Optional.empty();
    }

    /** The vote a node gets once no vote is taken any more: {@code Unknown}/{@code NotVoted}, {@code why} as message. */
    public static Vote notVoted(String why) {
        return new Vote("Unknown", "NotVoted", why);
    }

    private static Vote vote(String node, int others, int voters, int hear, Duration quorumWindow) {
        int needed = others / 2 + 1;
        String counts = hear + " of " + voters + " reporting peers heard " + node + " within the quorum window "
                + DurationFormat.format(quorumWindow) + " (" + others + " other members in the group)";
        if (voters < needed) {
            return new Vote("Unknown", "TooFewReports", counts + "; " + needed + " reports needed to vote");
        }
        if (hear * 2 > voters) {
            return new Vote("True", "MajorityHears", counts);
        }
        if ((voters - hear) * 2 > voters) {
            return new Vote("False", "MajorityLost", counts);
        }
        return new Vote("Unknown", "SplitVote", counts);
    }

    private static boolean hears(PeerReport peer, Duration quorumWindow) {
        if (peer.getConfirmed()) {
            return true;
        }
        if (!peer.hasSinceLastHeard()) {
            return false;
        }
        Duration since = Duration.ofSeconds(peer.getSinceLastHeard().getSeconds(), peer.getSinceLastHeard().getNanos());
        return since.compareTo(quorumWindow) <= 0;
    }
}
