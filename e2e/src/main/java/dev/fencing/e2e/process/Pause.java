package dev.fencing.e2e.process;

import java.time.Duration;

/**
 * A fixed wait of the harness: between polls, or an observation window in which something must (not) happen.
 * Conditions that can be polled belong to Awaitility or a poll loop around this; an interrupt ends the wait.
 */
public final class Pause {

    private Pause() {
    }

    /**
     * Sleeps for {@code duration}.
     *
     * @throws IllegalStateException when interrupted (the interrupt flag is set again)
     */
    public static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while pausing " + duration, e);
        }
    }
}
