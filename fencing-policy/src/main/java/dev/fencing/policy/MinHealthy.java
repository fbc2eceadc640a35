package dev.fencing.policy;

/**
 * A storm limit's {@code minHealthy}: a percentage of a set of nodes ({@code "50%"}) or a count ({@code 3}). A
 * fencing is admitted only while the healthy nodes are <em>more than</em> this: with the default {@code 50%}, a group
 * in which half of the nodes or more look failed at once is treated as one shared failure (a switch, a rack, a power
 * feed), not as independent node failures, and nobody is fenced. This is what NodeHealthCheck's {@code 51%} means
 * for groups of fewer than a hundred nodes.
 *
 * @param value   the percentage (0..100) or the count (0 or more)
 * @param percent true for a percentage
 */
public record MinHealthy(int value, boolean percent) {

    /** The default of both the per-group and the cluster-wide limit. */
    public static final MinHealthy DEFAULT = new MinHealthy(50, true);

    /** Checks the range. */
    public MinHealthy {
        if (value < 0 || (percent && value > 100)) {
            throw new IllegalArgumentException("minHealthy " + value + (percent ? "%" : "")
                    + " is out of range; write a percentage from 0% to 100% such as \"50%\", or a count such as 3");
        }
    }

    /**
     * Parses {@code "50%"}, {@code "3"} or the number 3 (an IntOrString as YAML and JSON carry it).
     *
     * @throws IllegalArgumentException saying what to write instead
     */
    public static MinHealthy parse(Object value) {
        if (value instanceof Integer || value instanceof Long || value instanceof Short) {
            long n = ((Number) value).longValue();
            if (n >= 0 && n <= Integer.MAX_VALUE) {
                return new MinHealthy((int) n, false);
            }
        } else if (value instanceof String s) {
            if (s.matches("[0-9]{1,3}%")) {
                return new MinHealthy(Integer.parseInt(s.substring(0, s.length() - 1)), true);
            }
            if (s.matches("[0-9]{1,9}")) {
                return new MinHealthy(Integer.parseInt(s), false);
            }
        }
        throw new IllegalArgumentException("minHealthy '" + value + "' is not valid; write a percentage such as "
                + "\"50%\" or a count of nodes such as 3");
    }

    /** True when {@code healthy} of {@code total} nodes are more than this limit: fencing may go on. */
    public boolean exceededBy(int healthy, int total) {
        return percent ? (long) healthy * 100 > (long) value * total : healthy > value;
    }

    /** The spelling used in the CRD and the flag: {@code 50%} or {@code 3}. */
    @Override
    public String toString() {
        return percent ? value + "%" : Integer.toString(value);
    }
}
