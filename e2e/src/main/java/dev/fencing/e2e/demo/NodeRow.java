package dev.fencing.e2e.demo;

import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.DisarmReason;
import dev.fencing.proto.fencing.v1.PeerMemberState;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * One line of the demo's live table: what one node's agent says about itself (GetStatus over its socket) plus what
 * its emulated watchdog recorded (feeds and resets, counted across reboots).
 *
 * @param node    the node name
 * @param status  the agent's answer, empty when it does not answer (reset, booting)
 * @param running whether the agent process of the current boot runs
 * @param feeds   keepalives the emulated watchdog received, all boots
 * @param resets  resets the emulated watchdog performed
 * @param kube    what the real API server shows about the node: its Ready condition, taints and whether the
 *                NodeGroup's status records it fenced
 */
record NodeRow(String node, Optional<AgentStatus> status, boolean running, int feeds, int resets, KubeView kube) {

    /**
     * The API server's view of one node.
     *
     * @param ready   the Node's Ready condition (True, False, Unknown, Missing), {@code ?} when the look failed
     * @param taints  its taint keys
     * @param fenced  whether the NodeGroup's {@code status.fencedNodes} names it
     */
    record KubeView(String ready, Set<String> taints, boolean fenced) {

        /** What the table shows when the API server could not be read. */
        static final KubeView UNKNOWN = new KubeView("?", Set.of(), false);

        KubeView {
            taints = Set.copyOf(taints);
        }

        String render() {
            List<String> parts = new ArrayList<>();
            for (String taint : new TreeSet<>(taints)) {
                parts.add(taint.replace("node.kubernetes.io/", ""));
            }
            if (fenced) {
                parts.add(0, "FENCED");
            }
            return parts.isEmpty() ? "-" : String.join(",", parts);
        }
    }

    static final String HEADER = String.format(Locale.ROOT, "%-8s %-8s %-8s %-11s %-9s %6s %6s  %-8s %-34s %s",
            "node", "agent", "members", "quorum", "armed", "feeds", "resets", "k8s", "fenced/taints", "note");

    /** @return the row as printed; {@link #signature()} is the same without the ever-growing feed count */
    String render() {
        return String.format(Locale.ROOT, "%-8s %-8s %-8s %-11s %-9s %6d %6d  %-8s %-34s %s", node, agent(),
                members(), quorum(), armed(), feeds, resets, kube.ready(), kube.render(), note());
    }

    /** @return the row without the feed counter: changes of state, not of time */
    String signature() {
        return String.join("|", node, agent(), members(), quorum(), armed(), String.valueOf(resets), kube.ready(),
                kube.render(), note());
    }

    private String agent() {
        if (!running) {
            return resets > 0 ? "RESET" : "down";
        }
        return status.isPresent() ? "up" : "booting";
    }

    private String members() {
        return status.filter(s -> s.getExpected() > 0).map(s -> (1 + s.getPeersList().stream().filter(p ->
                p.getMemberState() == PeerMemberState.PEER_MEMBER_STATE_ALIVE
                        || p.getMemberState() == PeerMemberState.PEER_MEMBER_STATE_SUSPECT).count())
                + "/" + s.getExpected()).orElse("-");
    }

    private String quorum() {
        return status.filter(s -> s.getExpected() > 0)
                .map(s -> (s.getQuorumHeld() ? "held " : "LOST ") + s.getHeard() + "/" + s.getExpected())
                .orElse("-");
    }

    private String armed() {
        return status.map(s -> s.getFencingInProgress() ? "FENCING" : s.getArmed() ? "yes" : "no").orElse("-");
    }

    private String note() {
        if (status.isEmpty()) {
            return running ? "" : resets > 0 ? "the watchdog reset this node" : "";
        }
        AgentStatus s = status.get();
        if (s.getFencingInProgress()) {
            return "quorum lost: feeding stopped, waiting for the watchdog";
        }
        if (!s.getArmed() && s.getDisarmReasonsCount() > 0) {
            return "disarmed: " + s.getDisarmReasonsList().stream().map(NodeRow::reason)
                    .collect(Collectors.joining(", "));
        }
        return "config from " + s.getConfigSource();
    }

    private static String reason(DisarmReason reason) {
        String kind = switch (reason.getKind()) {
            case KIND_DISABLE_FILE -> "disable file";
            case KIND_MAINTENANCE -> "maintenance";
            case KIND_BEING_REMOVED -> "being removed";
            case KIND_NOTIFY_MODE -> "Notify mode";
            case KIND_NO_CONFIG -> "no config yet";
            case KIND_ARMING_DELAY -> "arming delay";
            case KIND_WATCHDOG_UNAVAILABLE -> "watchdog unavailable";
            case KIND_SHUTTING_DOWN -> "shutting down";
            default -> reason.getKind().name();
        };
        return reason.getDetail().isBlank() ? kind : kind + " (" + reason.getDetail().strip() + ")";
    }
}
