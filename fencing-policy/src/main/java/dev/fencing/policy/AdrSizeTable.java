package dev.fencing.policy;

import java.time.Duration;
import java.util.List;

/**
 * The ADR's size-scaling table (guidance for memberlist timings by group size) and its interpolation.
 *
 * <p>Between rows every value is interpolated linearly in log(N), because gossip dissemination and memberlist's own
 * suspicion scaling grow with log(N); outside the table the nearest row is used. The suspicion multiplier is the
 * integer that puts memberlist's suspicion timeout ({@code mult × max(1, log10 N) × probe}) nearest the middle of
 * the (interpolated) suspicion range of the table.
 */
final class AdrSizeTable {

    /** One row: group size, probe interval, gossip interval, suspicion timeout range (all milliseconds). */
    record Row(int n, long probeMillis, long gossipMillis, long suspicionLowMillis, long suspicionHighMillis) {
    }

    /** The scaled base values for one group size. */
    record Scaled(int n, Duration probeInterval, Duration gossipInterval, Duration suspicionLow,
                  Duration suspicionHigh, int suspicionMult) {
    }

    static final List<Row> ROWS = List.of(
            new Row(3, 500, 200, 1_000, 2_000),
            new Row(10, 750, 250, 2_000, 3_000),
            new Row(50, 1_000, 400, 4_000, 6_000),
            new Row(100, 1_500, 500, 6_000, 10_000),
            new Row(1000, 3_000, 1_500, 15_000, 25_000));

    private AdrSizeTable() {
    }

    static Scaled at(int n) {
        Row first = ROWS.get(0);
        Row last = ROWS.get(ROWS.size() - 1);
        int clamped = Math.max(first.n(), Math.min(last.n(), n));
        Row lower = first;
        Row upper = first;
        for (int i = 0; i < ROWS.size(); i++) {
            Row row = ROWS.get(i);
            if (row.n() <= clamped) {
                lower = row;
                upper = i + 1 < ROWS.size() ? ROWS.get(i + 1) : row;
            }
        }
        double f = lower == upper ? 0.0
                : (Math.log(clamped) - Math.log(lower.n())) / (Math.log(upper.n()) - Math.log(lower.n()));
        long probe = lerp(lower.probeMillis(), upper.probeMillis(), f);
        long gossip = lerp(lower.gossipMillis(), upper.gossipMillis(), f);
        long low = lerp(lower.suspicionLowMillis(), upper.suspicionLowMillis(), f);
        long high = lerp(lower.suspicionHighMillis(), upper.suspicionHighMillis(), f);
        double unitMillis = SuspicionFormula.nodeScale(clamped) * probe;
        int mult = (int) Math.max(1, Math.round((low + high) / 2.0 / unitMillis));
        return new Scaled(clamped, Duration.ofMillis(probe), Duration.ofMillis(gossip), Duration.ofMillis(low),
                Duration.ofMillis(high), mult);
    }

    private static long lerp(long a, long b, double f) {
        return Math.round(a + (b - a) * f);
    }
}
