package dev.fencing.agent.disk;

import java.util.Collections;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * What the quorum loop publishes for the disk thread to write into this node's slot, as of its latest evaluation.
 *
 * @param expected every expected member, this node included
 * @param quorumSize votes needed
 * @param quorumHeld this node holds quorum by the network
 * @param revision the configuration revision
 * @param confirmed members with a confirmed round trip in the window (this node included)
 * @param heard members whose heartbeats arrived recently (cut-off evidence for them)
 */
public record LocalView(SortedSet<String> expected, int quorumSize, boolean quorumHeld, long revision,
    SortedSet<String> confirmed, SortedSet<String> heard) {

  public LocalView {
    expected = Collections.unmodifiableSortedSet(new TreeSet<>(expected));
    confirmed = Collections.unmodifiableSortedSet(new TreeSet<>(confirmed));
    heard = Collections.unmodifiableSortedSet(new TreeSet<>(heard));
  }

  /** Before the first evaluation: nothing known. */
  public static LocalView none() {
    return new LocalView(new TreeSet<>(), 1, false, 0, new TreeSet<>(), new TreeSet<>());
  }
}
