package dev.fencing.agent.quorum;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Which expected peers one node exchanges quorum heartbeats with, computed by every node alike from the group name
 * and the expected set (no coordination, no state).
 *
 * <p>Up to {@link #DIRECT_MAX} members every node heartbeats every other node (all-to-all, round trips only, the
 * version 1 wire format): at that size this costs at most 15 heartbeats per interval and needs no relaying. Above it
 * the group is <em>relayed</em>: the members are placed on {@link #rings(int)} consistent-hash rings (ring {@code j}
 * orders the members by a 64-bit hash of group, {@code j} and name) and a node's neighbours are its predecessor and
 * successor on every ring — at most {@code 2 × rings} peers, a union of random Hamiltonian cycles, which is an
 * expander with diameter about {@code log N / log(degree − 1)}. Hashing rather than a shared permutation keeps the
 * overlay stable: adding or removing one member changes only the edges next to it on each ring.
 *
 * <p>The {@linkplain #fingerprint() fingerprint} names the expected set (and so the member order a reach digest is
 * indexed by); a digest is used only by a node with the same fingerprint.
 */
public final class Overlay {

  /** Largest group that heartbeats all-to-all; larger groups relay reach digests over the rings. */
  public static final int DIRECT_MAX = dev.fencing.policy.PolicyResolver.MAX_ALL_TO_ALL_MEMBERS;

  private final List<String> members;
  private final boolean relayed;
  private final long fingerprint;
  private final String group;

  private Overlay(String group, SortedSet<String> expected) {
    this.group = group;
    this.members = List.copyOf(expected);
    this.relayed = members.size() > DIRECT_MAX;
    long h = hash(FNV_OFFSET, group);
    for (String m : members) {
      h = hash(h ^ '\n', m);
    }
    this.fingerprint = mix(h);
  }

  /** The overlay of {@code group} over {@code expected} (this node included). */
  public static Overlay of(String group, SortedSet<String> expected) {
    return new Overlay(group, expected);
  }

  /**
   * Number of rings for a relayed group of {@code n}: {@code max(3, ceil(log2(n) / 2.5))}, so at least 6
   * neighbours (a partition that takes 40 % of the members still leaves most nodes several); 4 (8 neighbours) at
   * N=1000.
   */
  public static int rings(int n) {
    double log2 = Math.log(Math.max(2, n)) / Math.log(2);
    return Math.max(3, (int) Math.ceil(log2 / 2.5));
  }

  /** True above {@link #DIRECT_MAX} members: heartbeats go to ring neighbours and carry reach digests. */
  public boolean relayed() {
    return relayed;
  }

  /** Every expected member in name order: the index order of a reach digest. */
  public List<String> members() {
    return members;
  }

  /** Identifies the group name and expected set; equal fingerprints mean equal digest indexing. */
  public long fingerprint() {
    return fingerprint;
  }

  /**
   * The peers {@code self} heartbeats: every other member when not relayed, else its ring neighbours. Symmetric:
   * {@code b ∈ neighbours(a) ⇔ a ∈ neighbours(b)}.
   */
  public SortedSet<String> neighbours(String self) {
    TreeSet<String> out = new TreeSet<>();
    if (!relayed) {
      out.addAll(members);
      out.remove(self);
      return Collections.unmodifiableSortedSet(out);
    }
    int rings = rings(members.size());
    for (int ring = 0; ring < rings; ring++) {
      long selfKey = ringKey(ring, self);
      String pred = null;
      String succ = null;
      String min = null;
      String max = null;
      long predKey = 0;
      long succKey = 0;
      long minKey = 0;
      long maxKey = 0;
      for (String m : members) {
        if (m.equals(self)) {
          continue;
        }
        long key = ringKey(ring, m);
        if (before(key, m, selfKey, self) && (pred == null || before(predKey, pred, key, m))) {
          pred = m;
          predKey = key;
        }
        if (before(selfKey, self, key, m) && (succ == null || before(key, m, succKey, succ))) {
          succ = m;
          succKey = key;
        }
        if (min == null || before(key, m, minKey, min)) {
          min = m;
          minKey = key;
        }
        if (max == null || before(maxKey, max, key, m)) {
          max = m;
          maxKey = key;
        }
      }
      // The ring wraps around: the first member's predecessor is the last, and the other way round.
      out.add(pred != null ? pred : max);
      out.add(succ != null ? succ : min);
    }
    return Collections.unmodifiableSortedSet(out);
  }

  private long ringKey(int ring, String member) {
    return mix(hash(hash(FNV_OFFSET, group) ^ (0x100 + ring), member));
  }

  private static boolean before(long keyA, String a, long keyB, String b) {
    int c = Long.compareUnsigned(keyA, keyB);
    return c < 0 || (c == 0 && a.compareTo(b) < 0);
  }

  private static final long FNV_OFFSET = 0xcbf29ce484222325L;
  private static final long FNV_PRIME = 0x100000001b3L;

  /** FNV-1a over the UTF-8 bytes: specified here, so every agent version computes the same overlay. */
  private static long hash(long h, String s) {
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= FNV_PRIME;
    }
    return h;
  }

  /** SplitMix64's finaliser: FNV alone leaves similar names with similar high bits. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
