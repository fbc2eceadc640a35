package dev.fencing.probes;

import java.util.Optional;

/**
 * A probe's HTTP answer: 200 "ok", or 503 with {@code failed}'s prefix and the reason; a probe that throws is a 503
 * too, never a failed request.
 *
 * @param status 200 or 503
 * @param body   the text body, one line
 */
public record ProbeAnswer(int status, String body) {

    /** Asks {@code probe} once. */
    public static ProbeAnswer of(Probe probe, String failed) {
        Optional<String> problem;
        try {
            problem = probe.problem();
        } catch (RuntimeException e) {
            problem = Optional.of("probe failed: " + e);
        }
        return problem.map(p -> new ProbeAnswer(503, failed + ": " + p + "\n")).orElse(new ProbeAnswer(200, "ok\n"));
    }
}
