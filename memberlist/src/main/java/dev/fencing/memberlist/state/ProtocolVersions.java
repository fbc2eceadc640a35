package dev.fencing.memberlist.state;

import dev.fencing.memberlist.NodeState;
import dev.fencing.memberlist.codec.PushNodeState;
import java.util.Collection;
import java.util.List;

/**
 * memberlist's protocol-version check on a push/pull merge: every node, local or remote and in any state, must use a
 * protocol version that every alive node supports, i.e. within [max of PMin, min of PMax] over the alive nodes. A node
 * without a Vsn counts as version 0 and fails the check, which is why every alive and push/pull entry carries one.
 */
final class ProtocolVersions {
  private ProtocolVersions() {}

  /** @return null if compatible, else why not */
  static String verify(List<PushNodeState> remote, Collection<NodeRecord> local) {
    int maxPMin = 0;
    int minPMax = 255;
    for (PushNodeState s : remote) {
      if (s.state() == NodeState.ALIVE.wireValue() && s.vsn() != null && s.vsn().length >= 6) {
        maxPMin = Math.max(maxPMin, s.vsn()[0] & 0xff);
        minPMax = Math.min(minPMax, s.vsn()[1] & 0xff);
      }
    }
    for (NodeRecord n : local) {
      if (n.state() == NodeState.ALIVE) {
        maxPMin = Math.max(maxPMin, n.vsn()[0] & 0xff);
        minPMax = Math.min(minPMax, n.vsn()[1] & 0xff);
      }
    }
    for (PushNodeState s : remote) {
      int pCur = s.vsn() != null && s.vsn().length >= 6 ? s.vsn()[2] & 0xff : 0;
      if (pCur < maxPMin || pCur > minPMax) {
        return mismatch(s.name(), pCur, maxPMin, minPMax);
      }
    }
    for (NodeRecord n : local) {
      int pCur = n.vsn()[2] & 0xff;
      if (pCur < maxPMin || pCur > minPMax) {
        return mismatch(n.name(), pCur, maxPMin, minPMax);
      }
    }
    return null;
  }

  private static String mismatch(String node, int pCur, int min, int max) {
    return "node " + node + " uses protocol version " + pCur + ", cluster needs " + min + ".." + max;
  }
}
