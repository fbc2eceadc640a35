package dev.fencing.agent.quorum;

import static dev.fencing.agent.quorum.QuorumEvaluatorTest.FOUR;
import static dev.fencing.agent.quorum.QuorumEvaluatorTest.MS;
import static dev.fencing.agent.quorum.QuorumEvaluatorTest.roundTrip;
import static dev.fencing.agent.quorum.QuorumEvaluatorTest.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Comparator;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** A verdict's side is its own, and the evaluator shares one side across verdicts only while it stays the same. */
class QuorumVerdictSideTest {

  private static QuorumVerdict verdict(SortedSet<String> side) {
    return new QuorumVerdict(true, 0, 1, 4, side.size(), 3, side, "none", 2_000 * MS, 0, List.of());
  }

  @Test
  void aVerdictKeepsACopyThatNobodyCanChange() {
    TreeSet<String> given = new TreeSet<>(Comparator.reverseOrder());
    given.addAll(List.of("a", "b", "c"));
    QuorumVerdict v = verdict(given);
    given.remove("b");
    given.add("z");

    assertThat(v.side()).containsExactly("c", "b", "a");
    assertThat(v.side().comparator()).as("a sorted set keeps its order").isNotNull();
    assertThat(v.side().first()).isEqualTo("c");
    assertThat(v.side().headSet("a")).containsExactly("c", "b");
    java.util.Set<String> same = java.util.Set.of("a", "b", "c");
    assertThat(v.side().equals(same)).as("a set's equals").isTrue();
    assertThat(same.equals(v.side())).isTrue();
    assertThat(v.side().hashCode()).isEqualTo(same.hashCode());
    assertThat(v.side()).hasToString("[c, b, a]");
    assertThatThrownBy(() -> v.side().add("d")).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> v.side().remove("a")).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> v.side().clear()).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> v.side().headSet("a").clear()).isInstanceOf(UnsupportedOperationException.class);
    assertThat(v.side()).containsExactly("c", "b", "a");

    assertThat(verdict(v.side()).side()).as("a frozen side is taken as it is, not copied again").isSameAs(v.side());
  }

  @Test
  void theEvaluatorSharesTheSideOnlyWhileTheSameMembersAreConfirmed() {
    QuorumEvaluator a = new QuorumEvaluator("g", 1, settings("a", FOUR, List.of()));
    roundTrip(a, "b", 100 * MS, 105 * MS);
    roundTrip(a, "c", 100 * MS, 105 * MS);
    roundTrip(a, "d", 100 * MS, 105 * MS);

    QuorumVerdict first = a.evaluate(200 * MS);
    QuorumVerdict second = a.evaluate(300 * MS);
    assertThat(first.side()).containsExactly("a", "b", "c", "d");
    assertThat(second.side()).as("unchanged: the same instance, no copy per tick").isSameAs(first.side());

    // d's confirmation (sent at 100 ms) ages out of the 2 s window after 2 100 ms; b's and c's are refreshed.
    roundTrip(a, "b", 1_500 * MS, 1_505 * MS);
    roundTrip(a, "c", 1_500 * MS, 1_505 * MS);
    QuorumVerdict withoutD = a.evaluate(2_150 * MS);
    assertThat(withoutD.side()).containsExactly("a", "b", "c");
    assertThat(withoutD.heard()).isEqualTo(3);
    assertThat(first.side()).as("an earlier verdict's side never changes").containsExactly("a", "b", "c", "d");
    assertThat(a.evaluate(2_200 * MS).side()).isSameAs(withoutD.side());

    roundTrip(a, "d", 2_300 * MS, 2_305 * MS);
    QuorumVerdict dBack = a.evaluate(2_400 * MS);
    assertThat(dBack.side()).containsExactly("a", "b", "c", "d");
    assertThat(dBack.heard()).isEqualTo(4);

    // b and c age out too (3 500 ms): only a and d are confirmed, a different side of the same size as before.
    QuorumVerdict onlyD = a.evaluate(3_550 * MS);
    assertThat(onlyD.side()).containsExactly("a", "d");
    assertThat(onlyD.held()).isFalse();

    // A new expected set: the side is built from it, even though the same peers are out.
    SortedSet<String> five = new TreeSet<>(List.of("a", "b", "c", "d", "e"));
    a.reconfigure(settings("a", five, List.of()));
    assertThat(a.evaluate(3_600 * MS).side()).containsExactly("a", "d");
  }
}
