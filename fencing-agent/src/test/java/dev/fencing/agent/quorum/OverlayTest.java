package dev.fencing.agent.quorum;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SortedSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class OverlayTest {

  private static SortedSet<String> members(int n) {
    TreeSet<String> out = new TreeSet<>();
    for (int i = 0; i < n; i++) {
      out.add("worker-" + i);
    }
    return out;
  }

  @Test
  void upToSixteenMembersEveryoneIsANeighbour() {
    Overlay overlay = Overlay.of("g", members(16));
    assertThat(overlay.relayed()).isFalse();
    assertThat(overlay.neighbours("worker-3")).hasSize(15).doesNotContain("worker-3");
  }

  @Test
  void relayedNeighboursAreSymmetricFewAndTheSameOnEveryNode() {
    SortedSet<String> expected = members(300);
    Overlay overlay = Overlay.of("g", expected);
    Overlay elsewhere = Overlay.of("g", new TreeSet<>(expected));
    assertThat(overlay.relayed()).isTrue();
    for (String m : expected) {
      SortedSet<String> neighbours = overlay.neighbours(m);
      assertThat(neighbours).hasSizeBetween(3, 2 * Overlay.rings(300)).doesNotContain(m);
      assertThat(elsewhere.neighbours(m)).isEqualTo(neighbours);
      for (String n : neighbours) {
        assertThat(overlay.neighbours(n)).as("%s is a neighbour of %s", m, n).contains(m);
      }
    }
    assertThat(Overlay.rings(1000)).isEqualTo(4);
    assertThat(Overlay.of("other", expected).fingerprint()).isNotEqualTo(overlay.fingerprint());
  }

  @Test
  void addingOneMemberChangesOnlyTheNeighboursNextToIt() {
    SortedSet<String> before = members(200);
    SortedSet<String> after = new TreeSet<>(before);
    after.add("worker-new");
    Overlay a = Overlay.of("g", before);
    Overlay b = Overlay.of("g", after);
    int changed = 0;
    for (String m : before) {
      if (!a.neighbours(m).equals(b.neighbours(m))) {
        changed++;
      }
    }
    assertThat(changed).isLessThanOrEqualTo(2 * Overlay.rings(201));
    assertThat(a.fingerprint()).isNotEqualTo(b.fingerprint());
  }
}
