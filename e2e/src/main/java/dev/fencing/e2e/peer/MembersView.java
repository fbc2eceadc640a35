package dev.fencing.e2e.peer;

import dev.fencing.e2e.process.ObservedLine;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * One {@code {"event":"members",…}} line: a node's view of the cluster.
 *
 * @param ts      the node's epoch-ms timestamp
 * @param alive   names of alive members (the Go 0.2.2 peer lists suspect members here: its API cannot tell them apart)
 * @param suspect names of suspect members
 * @param dead    names of dead members (the Go 0.2.2 peer lists left members here too)
 * @param left    names of members that left gracefully and are not reaped yet
 */
public record MembersView(long ts, Set<String> alive, Set<String> suspect, Set<String> dead, Set<String> left) {

    public MembersView {
        alive = Set.copyOf(alive);
        suspect = Set.copyOf(suspect);
        dead = Set.copyOf(dead);
        left = Set.copyOf(left);
    }

    /** Parses a members line; entries may be names or objects with a {@code name} field. */
    public static MembersView from(ObservedLine line) {
        return new MembersView(line.json().path("ts").asLong(), names(line, "alive"), names(line, "suspect"),
                names(line, "dead"), names(line, "left"));
    }

    private static Set<String> names(ObservedLine line, String field) {
        List<String> names = new ArrayList<>();
        line.json().path(field).forEach(entry -> names.add(entry.isObject() ? entry.path("name").asText()
                : entry.asText()));
        return new TreeSet<>(names);
    }

    /** @return dead and left: every former member the node still holds (not reaped yet) */
    public Set<String> departed() {
        Set<String> all = new TreeSet<>(dead);
        all.addAll(left);
        return all;
    }

    /** @return alive and suspect: every member the node has not declared dead */
    public Set<String> notDead() {
        Set<String> all = new TreeSet<>(alive);
        all.addAll(suspect);
        return all;
    }
}
