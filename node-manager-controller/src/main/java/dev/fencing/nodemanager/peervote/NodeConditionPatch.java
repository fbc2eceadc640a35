package dev.fencing.nodemanager.peervote;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The JSON patch (on {@code nodes/status}) that sets one Node condition, pure. The Node's status belongs to its
 * kubelet, which rewrites its own conditions; so the patch touches only our entry: it replaces it at its index
 * after a {@code test} that the entry there is still ours, or appends it after a {@code test} that the list is still
 * the one the cache showed (the API server refuses the patch if the list moved, and the next reconcile tries again).
 * A Node without any condition yet (no kubelet has reported it) is left alone.
 */
public final class NodeConditionPatch {

    private NodeConditionPatch() {
    }

    /**
     * The patch operations, or empty when the Node already says the same (status, reason and message).
     *
     * @param node the Node as the cache holds it
     */
    public static Optional<List<Map<String, Object>>> of(Node node, String type, PeersReachable.Vote vote,
                                                         Instant now) {
        List<NodeCondition> conditions = conditions(node);
        int index = indexOf(conditions, type);
        NodeCondition current = index < 0 ? null : conditions.get(index);
        if (current != null && vote.status().equals(current.getStatus()) && vote.reason().equals(current.getReason())
                && vote.message().equals(current.getMessage())) {
            return Optional.empty();
        }
        String at = now.truncatedTo(ChronoUnit.SECONDS).toString();
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("type", type);
        value.put("status", vote.status());
        value.put("reason", vote.reason());
        value.put("message", vote.message());
        value.put("lastHeartbeatTime", at);
        value.put("lastTransitionTime", current != null && vote.status().equals(current.getStatus())
                && current.getLastTransitionTime() != null ? current.getLastTransitionTime() : at);
        if (current == null) {
            if (conditions.isEmpty()) {
                // No kubelet has reported this Node yet: writing the list would race the kubelet's first status.
                return Optional.empty();
            }
            // Appended only while the list the cache showed is still there (its first entry unchanged).
            return Optional.of(List.of(op("test", "/status/conditions/0/type", conditions.get(0).getType()),
                    op("add", "/status/conditions/-", value)));
        }
        String path = "/status/conditions/" + index;
        return Optional.of(List.of(op("test", path + "/type", type), op("replace", path, value)));
    }

    /**
     * True when {@code vote} changes the condition's status or reason on {@code node} (or the Node does not carry
     * the condition yet), false when at most its message changes.
     */
    public static boolean isTransition(Node node, String type, PeersReachable.Vote vote) {
        List<NodeCondition> conditions = conditions(node);
        int index = indexOf(conditions, type);
        return index < 0 || !vote.status().equals(conditions.get(index).getStatus())
                || !vote.reason().equals(conditions.get(index).getReason());
    }

    private static List<NodeCondition> conditions(Node node) {
        return node.getStatus() == null || node.getStatus().getConditions() == null ? List.of()
                : node.getStatus().getConditions();
    }

    private static int indexOf(List<NodeCondition> conditions, String type) {
        for (int i = 0; i < conditions.size(); i++) {
            if (type.equals(conditions.get(i).getType())) {
                return i;
            }
        }
        return -1;
    }

    /** One JSON patch operation ({@code op}, {@code path}, {@code value}), as the API server reads it. */
    public static Map<String, Object> op(String op, String path, Object value) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("op", op);
        m.put("path", path);
        m.put("value", value);
        return m;
    }
}
