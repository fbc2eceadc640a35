package dev.fencing.nodemanager.cache;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which refused network addresses to log: each once while it lasts, again if it comes back after it ended. Remembers
 * per group only the refusals of the group's latest recompute, so what it holds is bounded by what is refused now,
 * not by every address a group ever refused (nodes come and go, addresses change).
 */
final class RefusalLog {

    private final Map<String, Set<String>> logged = new HashMap<>();

    /** The refusals of {@code group}'s latest recompute that its previous one did not have, in their order. */
    synchronized List<String> toLog(String group, Collection<String> refused) {
        Set<String> now = new LinkedHashSet<>(refused);
        Set<String> before = now.isEmpty() ? logged.remove(group) : logged.put(group, now);
        List<String> fresh = new ArrayList<>();
        for (String r : now) {
            if (before == null || !before.contains(r)) {
                fresh.add(r);
            }
        }
        return fresh;
    }

    /** Refusals remembered, over all groups. */
    synchronized int remembered() {
        return logged.values().stream().mapToInt(Set::size).sum();
    }
}
