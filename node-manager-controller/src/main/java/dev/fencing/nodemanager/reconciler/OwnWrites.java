package dev.fencing.nodemanager.reconciler;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What this replica last wrote per key (a node's annotation), believed over the informer cache while the cache lags
 * behind the write, so a reconcile that runs before the watch event does not write the same value again. The memory
 * is dropped as soon as the cache shows the write, and at the latest one {@code trust} interval after it: a value the
 * cache shows then is someone else's (another writer, a mutating webhook) and is acted on, never hidden for good.
 */
final class OwnWrites {

    // Entries past their trust interval no longer count; pruned when the map grows past this (deleted nodes).
    private static final int PRUNE_ABOVE = 4096;

    private record Written(Optional<String> value, Instant at) {
    }

    private final Map<String, Written> written = new ConcurrentHashMap<>();
    private final Duration trust;

    OwnWrites(Duration trust) {
        this.trust = Objects.requireNonNull(trust, "trust");
        if (trust.isNegative()) {
            throw new IllegalArgumentException("trust must not be negative: " + trust);
        }
    }

    /** The value to act on for {@code key}: our own write while the cache lags behind it, else the cached one. */
    Optional<String> current(String key, Optional<String> cached, Instant now) {
        Written w = written.get(key);
        if (w == null) {
            return cached;
        }
        if (w.value().equals(cached) || !now.isBefore(w.at().plus(trust))) {
            written.remove(key, w);
            return cached;
        }
        return w.value();
    }

    /** Remembers that {@code value} (empty: removed) was written for {@code key} at {@code now}. */
    void wrote(String key, Optional<String> value, Instant now) {
        if (written.size() > PRUNE_ABOVE) {
            written.entrySet().removeIf(e -> !now.isBefore(e.getValue().at().plus(trust)));
        }
        written.put(key, new Written(value, now));
    }

    int size() {
        return written.size();
    }
}
