package dev.fencing.nodemanager.status;

import dev.fencing.api.v1.NodeGroupStatus;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the status reconciler writes for one group.
 *
 * @param status       the new NodeGroup status
 * @param labelChanges per node, labels to set (value) or remove (null value)
 * @param events       Events to emit
 * @param reporting    expected nodes whose agent reported within the staleness window
 * @param heldBack     per silent node that would otherwise be recorded fenced, why it is not: it may still be holding
 *                     quorum under the config its last report says it runs
 */
public record StatusOutcome(NodeGroupStatus status, Map<String, Map<String, String>> labelChanges,
                            List<GroupEvent> events, Set<String> reporting, Map<String, String> heldBack) {

    /** Freezes the set and the map. */
    public StatusOutcome {
        reporting = Set.copyOf(reporting);
        heldBack = Map.copyOf(heldBack);
    }
}
