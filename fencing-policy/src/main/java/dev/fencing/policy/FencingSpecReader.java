package dev.fencing.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Reads a {@code fencing:} block, as any YAML/JSON parser returns it (maps, lists, strings, numbers), into a
 * {@link FencingSpec}: the one place that parses the user-facing spellings of {@code spec.fencing}, for the
 * NodeGroup (path {@code spec.fencing}) and the standalone agent file (path {@code fencing}). Every value that does
 * not parse, has the wrong type or is an unknown field becomes a {@link Violation} with its path; the policy rules
 * themselves are {@link PolicyResolver}'s.
 *
 * <p>Shape: {@code mode}, {@code watchdog.timeout} ({@code ^[0-9]+[smh]$}), {@code quorumLossAction},
 * {@code profile}, {@code quorum.size} ({@code Auto} or an integer), {@code quorum.tieBreakers} (list),
 * {@code timings.*} (durations as strings such as {@code 500ms}, counts as integers, {@code localHealthCap} a number),
 * {@code gossipLabel} ({@code GroupName} or {@code None}), {@code storm.minHealthy} ({@code "50%"} or a count),
 * {@code storm.maxConcurrent} (at least 1), {@code storm.cooldown} (a duration), {@code afterFence} ({@code Auto},
 * {@code Taint} or {@code DeleteNode}),
 * {@code networks} (a list of at most four distinct, non-overlapping CIDRs), {@code reachability} ({@code Any} or
 * {@code All}),
 * {@code disk.device} (string), {@code disk.required} (boolean), {@code disk.ioTimeout} (duration).
 */
public final class FencingSpecReader {

    private static final Set<String> FENCING_FIELDS =
            Set.of("mode", "watchdog", "quorumLossAction", "profile", "quorum", "timings", "gossipLabel", "storm",
                    "afterFence", "networks", "reachability", "disk");
    private static final Set<String> STORM_FIELDS = Set.of("minHealthy", "maxConcurrent", "cooldown");
    private static final Set<String> DISK_FIELDS = Set.of("device", "required", "ioTimeout");
    private static final Set<String> WATCHDOG_FIELDS = Set.of("timeout");
    private static final Set<String> QUORUM_FIELDS = Set.of("size", "tieBreakers");
    private static final Set<String> TIMING_FIELDS = Set.of("probeInterval", "probeTimeout", "suspicionMult",
            "suspicionMaxTimeoutMult", "gossipInterval", "gossipNodes", "retransmitMult", "pushPullInterval",
            "heartbeatInterval", "quorumWindow", "localHealthCap", "evaluationTick", "feedInterval", "armingDelay",
            "fenceMargin");

    /**
     * The outcome of reading: a spec when everything parsed, else the violations.
     *
     * @param spec       the spec, null when {@code violations} is not empty
     * @param violations values that did not parse, with their paths
     */
    public record Result(FencingSpec spec, List<Violation> violations) {

        /** Copies the list and checks that exactly one of spec and violations is given. */
        public Result {
            violations = List.copyOf(violations);
            if ((spec == null) == violations.isEmpty()) {
                throw new IllegalArgumentException("a Result holds either a spec or violations, not both or neither");
            }
        }

        /** True when everything parsed. */
        public boolean valid() {
            return spec != null;
        }

        /**
         * The spec.
         *
         * @throws InvalidPolicyException with the violations when reading failed
         */
        public FencingSpec orThrow() {
            if (spec == null) {
                throw new InvalidPolicyException(violations);
            }
            return spec;
        }
    }

    private final String path;
    private final List<Violation> violations = new ArrayList<>();

    private FencingSpecReader(String path) {
        this.path = path;
    }

    /**
     * Reads a {@code fencing:} block.
     *
     * @param fencing the block as parsed YAML/JSON; null or empty = every default
     * @param path    the path of the block for violations, e.g. {@code spec.fencing} or {@code fencing}
     */
    public static Result read(Map<String, ?> fencing, String path) {
        return new FencingSpecReader(path).readFencing(fencing == null ? Map.of() : fencing);
    }

    private Result readFencing(Map<String, ?> f) {
        unknown(f, FENCING_FIELDS, path);
        Mode mode = enumValue(f.get("mode"), Mode::parse, path + ".mode");
        Map<String, ?> watchdog = object(f.get("watchdog"), path + ".watchdog");
        Duration timeout = null;
        if (watchdog != null) {
            unknown(watchdog, WATCHDOG_FIELDS, path + ".watchdog");
            timeout = enumValue(watchdog.get("timeout"), DurationFormat::parseWholeUnit, path + ".watchdog.timeout");
        }
        QuorumLossAction action = enumValue(f.get("quorumLossAction"), QuorumLossAction::parse,
                path + ".quorumLossAction");
        Profile profile = enumValue(f.get("profile"), Profile::parse, path + ".profile");
        Map<String, ?> quorum = object(f.get("quorum"), path + ".quorum");
        Integer size = null;
        List<TieBreakerKind> tieBreakers = null;
        if (quorum != null) {
            unknown(quorum, QUORUM_FIELDS, path + ".quorum");
            size = quorumSize(quorum.get("size"), path + ".quorum.size");
            tieBreakers = tieBreakers(quorum.get("tieBreakers"), path + ".quorum.tieBreakers");
        }
        Map<String, ?> t = object(f.get("timings"), path + ".timings");
        TimingOverrides timings = t == null ? null : timings(t, path + ".timings");
        GossipLabel gossipLabel = enumValue(f.get("gossipLabel"), GossipLabel::parse, path + ".gossipLabel");
        Map<String, ?> s = object(f.get("storm"), path + ".storm");
        StormLimits storm = s == null ? null : storm(s, path + ".storm");
        AfterFence afterFence = enumValue(f.get("afterFence"), AfterFence::parse, path + ".afterFence");
        GossipNetworks networks = networks(f.get("networks"), f.get("reachability"));
        Map<String, ?> d = object(f.get("disk"), path + ".disk");
        DiskSpec disk = d == null ? null : disk(d, path + ".disk");
        if (!violations.isEmpty()) {
            return new Result(null, violations);
        }
        return new Result(FencingSpec.builder().mode(mode).watchdogTimeout(timeout).quorumLossAction(action)
                .profile(profile).quorumSize(size).tieBreakers(tieBreakers).timings(timings).gossipLabel(gossipLabel)
                .storm(storm).afterFence(afterFence).networks(networks).disk(disk)
                .build(), List.of());
    }

    private StormLimits storm(Map<String, ?> s, String at) {
        unknown(s, STORM_FIELDS, at);
        MinHealthy minHealthy = null;
        if (s.get("minHealthy") != null) {
            try {
                minHealthy = MinHealthy.parse(s.get("minHealthy"));
            } catch (IllegalArgumentException e) {
                violations.add(new Violation(at + ".minHealthy", e.getMessage()));
            }
        }
        Integer maxConcurrent = count(s, "maxConcurrent", at);
        if (maxConcurrent != null && maxConcurrent < 1) {
            violations.add(new Violation(at + ".maxConcurrent", "maxConcurrent must be at least 1, not "
                    + maxConcurrent + "; to stop fencing actions for a while, raise minHealthy to 100%"));
        }
        return new StormLimits(minHealthy, maxConcurrent, duration(s, "cooldown", at));
    }

    private DiskSpec disk(Map<String, ?> d, String at) {
        unknown(d, DISK_FIELDS, at);
        String device = enumValue(d.get("device"), s -> s, at + ".device");
        Boolean required = null;
        Object r = d.get("required");
        if (r instanceof Boolean b) {
            required = b;
        } else if (r != null) {
            violations.add(new Violation(at + ".required", "required must be true or false, not '" + r + "'"));
        }
        return new DiskSpec(device, required, duration(d, "ioTimeout", at));
    }

    private TimingOverrides timings(Map<String, ?> t, String at) {
        unknown(t, TIMING_FIELDS, at);
        return new TimingOverrides(
                duration(t, "probeInterval", at),
                duration(t, "probeTimeout", at),
                count(t, "suspicionMult", at),
                count(t, "suspicionMaxTimeoutMult", at),
                duration(t, "gossipInterval", at),
                count(t, "gossipNodes", at),
                count(t, "retransmitMult", at),
                duration(t, "pushPullInterval", at),
                duration(t, "heartbeatInterval", at),
                duration(t, "quorumWindow", at),
                number(t.get("localHealthCap"), at + ".localHealthCap"),
                duration(t, "evaluationTick", at),
                duration(t, "feedInterval", at),
                duration(t, "armingDelay", at),
                duration(t, "fenceMargin", at));
    }

    private GossipNetworks networks(Object value, Object reachabilityValue) {
        Reachability reachability = enumValue(reachabilityValue, Reachability::parse, path + ".reachability");
        if (value == null && reachability == null) {
            return null;
        }
        List<NetworkCidr> cidrs = new ArrayList<>();
        if (value instanceof List<?> list) {
            for (int i = 0; i < list.size(); i++) {
                NetworkCidr cidr = enumValue(list.get(i), NetworkCidr::parse, path + ".networks[" + i + "]");
                if (cidr != null) {
                    cidrs.add(cidr);
                } else if (list.get(i) == null) {
                    violations.add(new Violation(path + ".networks[" + i + "]", "empty entry; write a CIDR such as"
                            + " 10.0.0.0/24"));
                }
            }
        } else if (value != null) {
            violations.add(new Violation(path + ".networks", "networks must be a list of CIDRs such as"
                    + " [10.0.0.0/24, 10.1.0.0/24], not '" + value + "'"));
        }
        for (String problem : GossipNetworks.problems(cidrs)) {
            violations.add(new Violation(path + ".networks", problem));
        }
        if (!violations.isEmpty()) {
            return null;
        }
        return new GossipNetworks(cidrs, reachability == null ? GossipNetworks.DEFAULT_REACHABILITY : reachability);
    }

    private Integer quorumSize(Object value, String at) {
        if (value == null || "Auto".equals(value)) {
            return null;
        }
        if (value instanceof Number n && isWhole(n) && n.longValue() == n.intValue()) {
            return n.intValue();
        }
        if (value instanceof String s && s.matches("[0-9]{1,9}")) {
            return Integer.valueOf(s);
        }
        violations.add(new Violation(at,
                "quorum size '" + value + "' is not valid; write Auto or a whole number such as 3"));
        return null;
    }

    private List<TieBreakerKind> tieBreakers(Object value, String at) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof List<?> list)) {
            violations.add(new Violation(at, "tieBreakers must be a list such as [ControlPlane], not '"
                    + value + "'"));
            return null;
        }
        List<TieBreakerKind> out = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            Object entry = list.get(i);
            out.add(entry == null ? null : enumValue(entry, TieBreakerKind::parse, at + "[" + i + "]"));
        }
        return out;
    }

    private Duration duration(Map<String, ?> t, String name, String at) {
        return enumValue(t.get(name), DurationFormat::parse, at + "." + name);
    }

    private Integer count(Map<String, ?> t, String name, String at) {
        Object value = t.get(name);
        if (value == null) {
            return null;
        }
        if (value instanceof Number n && isWhole(n) && n.longValue() == n.intValue()) {
            return n.intValue();
        }
        violations.add(new Violation(at + "." + name, name + " must be a whole number such as 3, not '" + value + "'"));
        return null;
    }

    private Double number(Object value, String at) {
        if (value == null) {
            return null;
        }
        if (value instanceof Number n) {
            return n.doubleValue();
        }
        violations.add(new Violation(at, "localHealthCap must be a number such as 1.5, not '" + value + "'"));
        return null;
    }

    private <T> T enumValue(Object value, Function<String, T> parser, String at) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof String text)) {
            violations.add(new Violation(at, "must be a string, not '" + value + "'; quote it in YAML"));
            return null;
        }
        try {
            return parser.apply(text);
        } catch (IllegalArgumentException e) {
            violations.add(new Violation(at, e.getMessage()));
            return null;
        }
    }

    private Map<String, ?> object(Object value, String at) {
        if (value == null) {
            return null;
        }
        if (value instanceof Map<?, ?> map) {
            for (Object key : map.keySet()) {
                if (!(key instanceof String)) {
                    violations.add(new Violation(at, "field name '" + key + "' is not a string"));
                    return null;
                }
            }
            @SuppressWarnings("unchecked")
            Map<String, ?> typed = (Map<String, ?>) map;
            return typed;
        }
        violations.add(new Violation(at, "must be an object with fields, not '" + value + "'"));
        return null;
    }

    private void unknown(Map<String, ?> map, Set<String> known, String at) {
        for (String key : new TreeSet<>(map.keySet())) {
            if (!known.contains(key)) {
                violations.add(new Violation(at + "." + key, "unknown field '" + key + "'; known fields are "
                        + String.join(", ", new TreeSet<>(known))));
            }
        }
    }

    private static boolean isWhole(Number n) {
        return n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte
                || (n instanceof java.math.BigInteger b && b.bitLength() < 32);
    }
}
