package dev.fencing.nodemanager.reconciler;

import dev.fencing.nodemanager.status.GroupEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Per-node rate limit on the writes agent reports drive, so an agent whose reports flap (armed, disarmed, armed…)
 * cannot turn into a stream of API writes. A held-back label patch is not lost: the next reconcile (at most
 * {@code --status-interval} later) computes it again from the caches and writes it once the node's interval has
 * passed. A held-back Event is a duplicate of one just emitted for the same object and reason, and is dropped.
 */
final class ReportWriteLimiter {

    // Entries older than their interval no longer limit anything; pruned when the map grows past this.
    private static final int PRUNE_ABOVE = 4096;

    private final Duration labelInterval;
    private final Duration eventInterval;
    private final Map<String, Instant> lastLabelPatch = new HashMap<>();
    private final Map<String, Instant> lastEvent = new HashMap<>();
    private final Map<String, Instant> lastConditionPatch = new HashMap<>();
    private final Map<String, Instant> lastConditionTransition = new HashMap<>();
    private final Map<String, Instant> lastAnnotationPatch = new HashMap<>();
    private final AtomicLong limitedConditionPatches = new AtomicLong();
    private final AtomicLong limitedLabelPatches = new AtomicLong();
    private final AtomicLong limitedEvents = new AtomicLong();

    ReportWriteLimiter(WriteLimits limits) {
        this.labelInterval = limits.labelPatchInterval();
        this.eventInterval = limits.eventInterval();
    }

    /** True (and remembered) when {@code node}'s labels may be patched now. */
    synchronized boolean allowLabelPatch(String node, Instant now) {
        if (allow(lastLabelPatch, node, now, labelInterval)) {
            return true;
        }
        limitedLabelPatches.incrementAndGet();
        return false;
    }

    /**
     * How much rarer than status or reason changes a peer vote's message-only change (new counts) is written: every
     * node's counts change when one agent of the group restarts or flaps, so in a group of N that is N Node status
     * writes (each a watch event for every Node watcher in the cluster) per change.
     */
    static final int MESSAGE_ONLY_INTERVALS = 12;

    /**
     * True (and remembered) when {@code node}'s peer-vote condition may be patched now. A patch that changes status
     * or reason ({@code transition}) is allowed once per node per label interval; one that changes only the message
     * (the counts) once per {@value #MESSAGE_ONLY_INTERVALS} label intervals. The two allowances are separate, so a
     * message-only write, for instance from a reconcile that saw only some of the voters' new reports, cannot hold
     * back the flip it was the first step of. A held-back patch is computed again at the next reconcile.
     */
    synchronized boolean allowConditionPatch(String node, Instant now, boolean transition) {
        if (transition ? allow(lastConditionTransition, node, now, labelInterval)
                : allow(lastConditionPatch, node, now, labelInterval.multipliedBy(MESSAGE_ONLY_INTERVALS))) {
            return true;
        }
        limitedConditionPatches.incrementAndGet();
        return false;
    }

    /**
     * True (and remembered) when {@code node}'s gossip-address annotation may be patched now: at most one patch per
     * node per label interval, so an agent whose reported addresses flap cannot turn into a stream of writes. A
     * held-back patch is computed again at the next reconcile.
     */
    synchronized boolean allowAnnotationPatch(String node, Instant now) {
        return allow(lastAnnotationPatch, node, now, labelInterval);
    }

    long limitedConditionPatches() {
        return limitedConditionPatches.get();
    }

    /** True (and remembered) unless the same Event (object, reason) was emitted within the interval. */
    synchronized boolean allowEvent(GroupEvent event, Instant now) {
        String key = (event.onNode() ? "node/" : "nodegroup/") + event.name() + "/" + event.reason();
        if (allow(lastEvent, key, now, eventInterval)) {
            return true;
        }
        limitedEvents.incrementAndGet();
        return false;
    }

    long limitedLabelPatches() {
        return limitedLabelPatches.get();
    }

    long limitedEvents() {
        return limitedEvents.get();
    }

    private static boolean allow(Map<String, Instant> last, String key, Instant now, Duration interval) {
        Instant previous = last.get(key);
        if (previous != null && now.isBefore(previous.plus(interval))) {
            return false;
        }
        last.put(key, now);
        if (last.size() > PRUNE_ABOVE) {
            Iterator<Instant> it = last.values().iterator();
            while (it.hasNext()) {
                if (!now.isBefore(it.next().plus(interval))) {
                    it.remove();
                }
            }
        }
        return true;
    }
}
