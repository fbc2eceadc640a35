package dev.fencing.nodemanager.grpc.auth;

import io.grpc.Status;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Counts the AgentControl calls refused before the service sees them, per status code, and decides which get a log
 * line: per code at most one per {@link #LOG_INTERVAL}, carrying how many were refused with that code in all and how
 * many the quiet period hid (the pattern of memberlist's {@code DropLog}). Anyone who reaches the port can make calls
 * with made-up tokens as fast as they are refused, and a WARN line per call made that a log flood. Thread-safe.
 */
final class RefusedCalls {

    /** At most one line per status code in this interval. */
    static final Duration LOG_INTERVAL = Duration.ofSeconds(10);
    private static final long NEVER = Long.MIN_VALUE;

    private final LongSupplier nanoTime;
    private final Map<Status.Code, Kind> kinds = new ConcurrentHashMap<>();

    /** What to log about a refusal: the refusals of its code so far and how many were not logged since the last. */
    record Line(long total, long notLogged) {
    }

    // One status code's counts, as memberlist's DropLog keeps them for one kind of drop.
    private static final class Kind {
        final AtomicLong total = new AtomicLong();
        final AtomicLong lastLogged = new AtomicLong(NEVER);
        final AtomicLong loggedTotal = new AtomicLong();
    }

    /** @param nanoTime monotonic clock in nanoseconds ({@code System::nanoTime} outside tests) */
    RefusedCalls(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

    /** Counts one call refused with {@code code}; a line to log when none of that code was logged lately, else null. */
    Line refused(Status.Code code) {
        Kind kind = kinds.computeIfAbsent(code, c -> new Kind());
        long t = kind.total.incrementAndGet();
        long now = nanoTime.getAsLong();
        long last = kind.lastLogged.get();
        if (last != NEVER && now - last < LOG_INTERVAL.toNanos() || !kind.lastLogged.compareAndSet(last, now)) {
            return null;
        }
        long hidden = t - 1 - kind.loggedTotal.getAndSet(t);
        return new Line(t, Math.max(0, hidden));
    }

    /** Calls refused with {@code code} since start. */
    long total(Status.Code code) {
        Kind kind = kinds.get(code);
        return kind == null ? 0 : kind.total.get();
    }
}
