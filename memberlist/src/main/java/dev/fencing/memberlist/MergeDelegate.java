package dev.fencing.memberlist;

import java.util.List;

/** Vets the remote member list of a join before it is merged, e.g. to refuse joining another cluster. */
@FunctionalInterface
public interface MergeDelegate {
  /** @return null to accept the merge, or a reason to refuse it */
  String notifyMerge(List<Node> peers);
}
