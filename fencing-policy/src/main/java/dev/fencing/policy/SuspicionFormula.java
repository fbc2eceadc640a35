package dev.fencing.policy;

import java.time.Duration;

/** memberlist's suspicionTimeout: suspicionMult × max(1, log10(n)) × probeInterval. */
final class SuspicionFormula {

    private SuspicionFormula() {
    }

    static double nodeScale(int n) {
        return Math.max(1.0, Math.log10(Math.max(1, n)));
    }

    static Duration timeout(int suspicionMult, int n, Duration probeInterval) {
        // as memberlist: time.Duration(suspicionMult) * time.Duration(nodeScale*1000) * interval / 1000
        long scaleMillis = (long) (nodeScale(n) * 1000);
        return probeInterval.multipliedBy(suspicionMult).multipliedBy(scaleMillis).dividedBy(1000);
    }
}
