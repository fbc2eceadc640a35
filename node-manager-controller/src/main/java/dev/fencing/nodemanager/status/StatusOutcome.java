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
 */
public record StatusOutcome(NodeGroupStatus status, Map<String, Map<String, String>> labelChanges,
                            List<GroupEvent> events, Set<String> reporting) {

    /** Freezes the set. */
    public StatusOutcome {
        reporting = Set.copyOf(reporting);
    }
}
