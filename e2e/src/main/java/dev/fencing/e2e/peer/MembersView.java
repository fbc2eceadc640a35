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
 * @param dead    names of dead or left members
 */
public record MembersView(long ts, Set<String> alive, Set<String> suspect, Set<String> dead) {

    public MembersView {
        alive = Set.copyOf(alive);
        suspect = Set.copyOf(suspect);
        dead = Set.copyOf(dead);
    }

    /** Parses a members line; entries may be names or objects with a {@code name} field. */
    public static MembersView from(ObservedLine line) {
        return new MembersView(line.json().path("ts").asLong(), names(line, "alive"), names(line, "suspect"),
                names(line, "dead"));
    }

    private static Set<String> names(ObservedLine line, String field) {
        List<String> names = new ArrayList<>();
        line.json().path(field).forEach(entry -> names.add(entry.isObject() ? entry.path("name").asText()
                : entry.asText()));
        return new TreeSet<>(names);
    }

    /** @return alive and suspect: every member the node has not declared dead */
    public Set<String> notDead() {
        Set<String> all = new TreeSet<>(alive);
        all.addAll(suspect);
        return all;
    }
}
