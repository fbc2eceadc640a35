package dev.fencing.nodemanager.stream;

import dev.fencing.policy.MemberSetDigest;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The expected member sets this replica has served one group's agents since it started, newest last, each with the
 * time it stopped being served (the newest: still served), at most {@link #LIMIT}. Agents report the digest of the
 * set their quorum is counted over ({@link MemberSetDigest}); the safe-to-assume-fenced rule looks a silent node's
 * set up here, because a node cut off before a membership change reached it goes on counting its quorum over the set
 * it had (ARCHITECTURE §7). Thread-safe; {@link #copy()} gives a snapshot for a status calculation.
 */
public final class ServedMemberSets {
    /** Sets kept per group; the oldest goes first. A digest no longer kept counts as unknown (nobody is fenced on it). */
    public static final int LIMIT = 32;

    private final Deque<Served> sets = new ArrayDeque<>();

    /** One member set, and until when it was served ({@code null}: it still is). */
    public record Served(Set<String> names, String digest, Instant until) {
    }

    /** Records that {@code names} are the members served from {@code at} on (nothing changes if they already are). */
    public synchronized void record(Set<String> names, Instant at) {
        Served newest = sets.peekLast();
        if (newest != null && newest.names().equals(names)) {
            return;
        }
        if (newest != null) {
            sets.pollLast();
            sets.addLast(new Served(newest.names(), newest.digest(), at));
        }
        Set<String> copy = java.util.Collections.unmodifiableSet(new TreeSet<>(names));
        sets.addLast(new Served(copy, MemberSetDigest.of(copy), null));
        while (sets.size() > LIMIT) {
            sets.pollFirst();
        }
    }

    /** The served set with this digest, if this replica served it and still keeps it. */
    public synchronized Optional<Set<String>> byDigest(String digest) {
        for (Served s : sets) {
            if (s.digest().equals(digest)) {
                return Optional.of(s.names());
            }
        }
        return Optional.empty();
    }

    /** The sets still served at or after {@code at} (the one served now included), oldest first. */
    public synchronized List<Set<String>> servedSince(Instant at) {
        List<Set<String>> out = new ArrayList<>();
        for (Served s : sets) {
            if (s.until() == null || !s.until().isBefore(at)) {
                out.add(s.names());
            }
        }
        return out;
    }

    /** A snapshot. */
    public synchronized ServedMemberSets copy() {
        ServedMemberSets out = new ServedMemberSets();
        out.sets.addAll(sets);
        return out;
    }
}
