package dev.fencing.nodemanager.reconciler;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What this replica last wrote per node and name (a label, an annotation), believed over the informer cache while
 * the cache lags behind the write, so a reconcile that runs before the watch event does not compute the same write
 * again. A write is forgotten as soon as the cache shows it, and at the latest one {@code trust} interval after it: a
 * value the cache shows then is someone else's (another writer, a mutating webhook) and is acted on, never hidden
 * for good.
 */
final class OwnWrites {

    // Entries past their trust interval no longer count; pruned when this many nodes are held (deleted nodes).
    private static final int PRUNE_ABOVE = 4096;

    private record Written(Optional<String> value, Instant at) {
    }

    // node → (name → our write; an empty value is a removal)
    private final Map<String, Map<String, Written>> written = new ConcurrentHashMap<>();
    private final Duration trust;

    OwnWrites(Duration trust) {
        this.trust = Objects.requireNonNull(trust, "trust");
        if (trust.isNegative()) {
            throw new IllegalArgumentException("trust must not be negative: " + trust);
        }
    }

    /** The value of {@code name} to act on: our own write while the cache lags behind it, else {@code cached}. */
    Optional<String> current(String node, String name, Optional<String> cached, Instant now) {
        Map<String, Written> ours = written.get(node);
        Written w = ours == null ? null : ours.get(name);
        if (w == null) {
            return cached;
        }
        if (w.value().equals(cached) || !now.isBefore(w.at().plus(trust))) {
            ours.remove(name, w);
            return cached;
        }
        return w.value();
    }

    /** All of {@code node}'s values to act on: {@code cached} (may be null) with each name resolved by current(). */
    Map<String, String> view(String node, Map<String, String> cached, Instant now) {
        Map<String, String> view = new HashMap<>(cached == null ? Map.of() : cached);
        for (String name : written.getOrDefault(node, Map.of()).keySet()) {
            current(node, name, Optional.ofNullable(view.get(name)), now)
                    .ifPresentOrElse(v -> view.put(name, v), () -> view.remove(name));
        }
        return view;
    }

    /** Remembers that {@code value} (empty: removed) was written as {@code node}'s {@code name} at {@code now}. */
    void wrote(String node, String name, Optional<String> value, Instant now) {
        if (written.size() > PRUNE_ABOVE) {
            written.values().forEach(m -> m.values().removeIf(w -> !now.isBefore(w.at().plus(trust))));
            written.values().removeIf(Map::isEmpty);
        }
        written.computeIfAbsent(node, k -> new ConcurrentHashMap<>()).put(name, new Written(value, now));
    }

    /** Writes still believed over the cache. */
    int size() {
        return written.values().stream().mapToInt(Map::size).sum();
    }
}
