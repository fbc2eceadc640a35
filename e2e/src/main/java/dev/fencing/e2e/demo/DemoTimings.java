package dev.fencing.e2e.demo;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** What the demo measured, in the order it happened, printed as a summary at the end. */
final class DemoTimings {

    private final List<Measure> measures = new ArrayList<>();
    private double tStopSeconds;
    private double watchdogSeconds;
    private double armingDelaySeconds;

    /** Records the resolved policy the agents reported, against which the fence timings are read. */
    void policy(double tStop, double watchdogTimeout, double armingDelay) {
        this.tStopSeconds = tStop;
        this.watchdogSeconds = watchdogTimeout;
        this.armingDelaySeconds = armingDelay;
    }

    /** @return T_stop + watchdog timeout in milliseconds: the bound on partition-to-reset */
    long boundMillis() {
        return Math.round((tStopSeconds + watchdogSeconds) * 1000);
    }

    void record(String what, long millis) {
        measures.add(new Measure(what, millis));
    }

    void print(PrintStream out) {
        out.println();
        out.println("==> Measured timings");
        out.printf("    policy: T_stop %.2f s, watchdog timeout %.0f s (bound partition -> reset: %.2f s), "
                + "arming delay %.0f s%n", tStopSeconds, watchdogSeconds, boundMillis() / 1000.0, armingDelaySeconds);
        int width = measures.stream().mapToInt(m -> m.what().length()).max().orElse(10);
        for (Measure m : measures) {
            out.printf("    %-" + width + "s %8.2f s%n", m.what(), m.millis() / 1000.0);
        }
    }

    private record Measure(String what, long millis) {
    }
}
