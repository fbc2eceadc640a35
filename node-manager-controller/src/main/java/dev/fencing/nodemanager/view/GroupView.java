package dev.fencing.nodemanager.view;

import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.report.ReceivedReport;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * What one controller replica knows of a group's agents, for people: per expected node its armed state, whether it
 * holds quorum, its last contact, and its row of the heard matrix (whom it confirms a round trip with). Built from
 * the agents' latest reports only; the replica that leads sees every agent's reports (followers forward them), a
 * follower only those of agents connected to it, which {@code leader} says.
 *
 * @param group         the group
 * @param leader        this replica leads, so every agent's reports reach it
 * @param generatedAt   this replica's clock when the view was built (RFC 3339)
 * @param staleAfter    a report older than this counts as silence ({@code --report-stale-after}), in seconds
 * @param quorumSize    votes needed, or 0 when the spec is invalid or fencing is off
 * @param members       the expected members in name order (the matrix's column order)
 * @param nodes         one row per member, in the same order
 * @param status        the group status this replica computed last (the leader) or the one the leader kept (a
 *                      follower: from the NodeGroup, or from its status ConfigMap); null when it has none
 * @param heldBack      (the leader) per silent node the fenced-node rule holds back, why: it may still be holding
 *                      quorum under the config its last report says it runs; empty on a follower
 */
public record GroupView(String group, boolean leader, String generatedAt, long staleAfter, int quorumSize,
                        List<String> members, List<NodeRow> nodes, NodeGroupStatus status,
                        Map<String, String> heldBack) {

    /** Matrix mark: this node confirms a round trip with the peer. */
    public static final char CONFIRMED = '+';
    /** Matrix mark: this node reports the peer but has no confirmed round trip with it. */
    public static final char NOT_CONFIRMED = '-';
    /** Matrix mark: the diagonal. */
    public static final char SELF = '=';
    /** Matrix mark: no fresh report from this node, so its row is unknown. */
    public static final char UNKNOWN = '?';

    /** Copies the lists and the map (sorted by node). */
    public GroupView {
        Objects.requireNonNull(group, "group");
        members = List.copyOf(members);
        nodes = List.copyOf(nodes);
        heldBack = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(heldBack == null ? Map.of()
                : heldBack));
    }

    /**
     * One node's row.
     *
     * @param name          node
     * @param reporting     this replica holds a fresh report of it (younger than staleAfter)
     * @param reportAge     seconds since this replica received its latest report, or null when it holds none
     * @param armed         its latest fresh report says armed (null when not reporting)
     * @param quorumHeld    its latest fresh report says quorum held (null when not reporting)
     * @param confirmed     members it confirms including itself (null when not reporting)
     * @param lastContact   the latest instant anyone heard it: its own latest report's receive time, or a fresh
     *                      report of a peer minus that peer's {@code since_last_heard} (RFC 3339); null when never
     * @param heard         its matrix row, one mark per member in {@code members} order
     * @param notConfirmed  members (other than itself) it does not confirm; empty when not reporting
     */
    public record NodeRow(String name, boolean reporting, Long reportAge, Boolean armed, Boolean quorumHeld,
                          Integer confirmed, String lastContact, String heard, List<String> notConfirmed) {

        /** Copies the list. */
        public NodeRow {
            Objects.requireNonNull(name, "name");
            notConfirmed = List.copyOf(notConfirmed);
        }
    }

    /**
     * Builds the view.
     *
     * @param model      the group as this replica's caches see it (expected members, resolved quorum)
     * @param reports    latest report per node held by this replica
     * @param leader     this replica leads
     * @param now        this replica's clock
     * @param staleAfter reports older than this are silence
     */
    public static GroupView of(GroupModel model, Function<String, Optional<ReceivedReport>> reports, boolean leader,
                               Instant now, Duration staleAfter) {
        List<String> members = new ArrayList<>(model.expected().keySet());
        Map<String, ReceivedReport> latest = new HashMap<>();
        Map<String, ReceivedReport> fresh = new HashMap<>();
        for (String m : members) {
            reports.apply(m).filter(r -> r.group().equals(model.group())).ifPresent(r -> {
                latest.put(m, r);
                if (!r.receivedAt().isBefore(now.minus(staleAfter))) {
                    fresh.put(m, r);
                }
            });
        }
        // lastContact per member, from its own latest report and every fresh report that names it.
        Map<String, Instant> lastContact = new HashMap<>();
        latest.forEach((m, r) -> lastContact.put(m, r.receivedAt()));
        fresh.forEach((reporter, r) -> {
            for (PeerReport p : r.report().getPeersList()) {
                if (p.hasSinceLastHeard() && model.expected().containsKey(p.getName())) {
                    Instant at = r.receivedAt().minus(Duration.ofSeconds(p.getSinceLastHeard().getSeconds(),
                            p.getSinceLastHeard().getNanos()));
                    lastContact.merge(p.getName(), at, (a, b) -> a.isAfter(b) ? a : b);
                }
            }
        });
        List<NodeRow> rows = new ArrayList<>(members.size());
        for (String m : members) {
            ReceivedReport own = latest.get(m);
            Long age = own == null ? null : Duration.between(own.receivedAt(), now).toSeconds();
            ReceivedReport r = fresh.get(m);
            StringBuilder heard = new StringBuilder(members.size());
            List<String> notConfirmed = new ArrayList<>();
            if (r == null) {
                members.forEach(p -> heard.append(p.equals(m) ? SELF : UNKNOWN));
                rows.add(new NodeRow(m, false, age, null, null, null, text(lastContact.get(m)), heard.toString(),
                        List.of()));
                continue;
            }
            Map<String, Boolean> confirms = new HashMap<>();
            r.report().getPeersList().forEach(p -> confirms.merge(p.getName(), p.getConfirmed(), Boolean::logicalOr));
            for (String p : members) {
                if (p.equals(m)) {
                    heard.append(SELF);
                } else if (confirms.getOrDefault(p, false)) {
                    heard.append(CONFIRMED);
                } else {
                    heard.append(NOT_CONFIRMED);
                    notConfirmed.add(p);
                }
            }
            rows.add(new NodeRow(m, true, age, r.report().getArmed(), r.report().getQuorumHeld(),
                    r.report().getConfirmed(), text(lastContact.get(m)), heard.toString(), notConfirmed));
        }
        int quorum = model.policy() == null ? 0 : model.policy().quorumSize();
        return new GroupView(model.group(), leader, now.toString(), staleAfter.toSeconds(), quorum, members, rows,
                null, Map.of());
    }

    /** This view with the group's status (see {@link #status()}). */
    public GroupView withStatus(NodeGroupStatus groupStatus) {
        return new GroupView(group, leader, generatedAt, staleAfter, quorumSize, members, nodes, groupStatus,
                heldBack);
    }

    /** This view with the nodes the fenced-node rule holds back (see {@link #heldBack()}). */
    public GroupView withHeldBack(Map<String, String> nodesHeldBack) {
        return new GroupView(group, leader, generatedAt, staleAfter, quorumSize, members, nodes, status,
                nodesHeldBack);
    }

    private static String text(Instant at) {
        return at == null ? null : at.toString();
    }
}
