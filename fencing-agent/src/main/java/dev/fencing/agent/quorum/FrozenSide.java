package dev.fencing.agent.quorum;

import java.util.AbstractSet;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * A verdict's side: an unmodifiable sorted copy of member names that nothing else references. Because no one can
 * change it, {@link QuorumVerdict} takes one as it is instead of copying it again, and the evaluator hands the same
 * instance to every verdict while the side stays the same (an idle agent's case: ten verdicts a second, one side), so
 * comparing two ticks' sides is an identity check.
 */
final class FrozenSide extends AbstractSet<String> implements SortedSet<String> {

  private final SortedSet<String> names;

  private FrozenSide(SortedSet<String> copy) {
    this.names = Collections.unmodifiableSortedSet(copy);
  }

  /** {@code names} itself when it is already frozen, otherwise a frozen copy (a sorted set keeps its order). */
  static SortedSet<String> of(Collection<String> names) {
    if (names instanceof FrozenSide frozen) {
      return frozen;
    }
    return new FrozenSide(names instanceof SortedSet<String> sorted ? new TreeSet<>(sorted) : new TreeSet<>(names));
  }

  /** Freezes {@code fresh} without a copy: the caller hands it over and keeps no reference. */
  static SortedSet<String> owning(TreeSet<String> fresh) {
    return new FrozenSide(fresh);
  }

  @Override
  public Iterator<String> iterator() {
    return names.iterator();
  }

  @Override
  public int size() {
    return names.size();
  }

  @Override
  public boolean contains(Object o) {
    return names.contains(o);
  }

  @Override
  public Comparator<? super String> comparator() {
    return names.comparator();
  }

  @Override
  public SortedSet<String> subSet(String fromElement, String toElement) {
    return names.subSet(fromElement, toElement);
  }

  @Override
  public SortedSet<String> headSet(String toElement) {
    return names.headSet(toElement);
  }

  @Override
  public SortedSet<String> tailSet(String fromElement) {
    return names.tailSet(fromElement);
  }

  @Override
  public String first() {
    return names.first();
  }

  @Override
  public String last() {
    return names.last();
  }
}
