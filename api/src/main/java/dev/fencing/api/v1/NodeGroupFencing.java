package dev.fencing.api.v1;

import dev.fencing.policy.DurationFormat;
import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.InvalidPolicyException;
import dev.fencing.policy.Mode;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.policy.Profile;
import dev.fencing.policy.QuorumLossAction;
import dev.fencing.policy.ResolvedPolicy;
import dev.fencing.policy.TieBreakerKind;
import dev.fencing.policy.TimingOverrides;
import dev.fencing.policy.Violation;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Maps a NodeGroup's {@code spec.fencing} (strings, as stored) to the policy module's {@link FencingSpec}. Every
 * string that does not parse becomes a {@link Violation} with its CRD path; the rules themselves live in
 * {@link PolicyResolver}.
 */
public final class NodeGroupFencing {

    private static final String FENCING = "spec.fencing";
    private static final String TIMINGS = FENCING + ".timings.";

    /**
     * The outcome of mapping: a spec when every string parsed, else the violations.
     *
     * @param spec       the mapped spec, null when {@code violations} is not empty
     * @param violations strings that did not parse, with their CRD paths
     */
    public record Mapping(FencingSpec spec, List<Violation> violations) {

        /** Copies the list and checks that exactly one of spec and violations is given. */
        public Mapping {
            violations = List.copyOf(violations);
            if ((spec == null) == violations.isEmpty()) {
                throw new IllegalArgumentException("a Mapping holds either a spec or violations, not both or neither");
            }
        }

        /** True when every string parsed. */
        public boolean valid() {
            return spec != null;
        }
    }

    private NodeGroupFencing() {
    }

    /** True when the NodeGroup has {@code spec.fencing}: fencing is switched on for the group. */
    public static boolean fencingEnabled(NodeGroup nodeGroup) {
        return nodeGroup.getSpec() != null && nodeGroup.getSpec().getFencing() != null;
    }

    /**
     * Maps the NodeGroup's {@code spec.fencing}.
     *
     * @throws IllegalArgumentException when fencing is off for the group (check {@link #fencingEnabled} first)
     */
    public static Mapping map(NodeGroup nodeGroup) {
        if (!fencingEnabled(nodeGroup)) {
            throw new IllegalArgumentException("NodeGroup " + nodeGroup.getMetadata().getName()
                    + " has no spec.fencing: fencing is off for it; check fencingEnabled() before mapping");
        }
        return map(nodeGroup.getSpec().getFencing());
    }

    /** Maps a {@code spec.fencing} object. */
    public static Mapping map(Fencing fencing) {
        Objects.requireNonNull(fencing, "fencing");
        List<Violation> violations = new ArrayList<>();
        Mode mode = parse(fencing.getMode(), Mode::parse, FENCING + ".mode", violations);
        Duration timeout = fencing.getWatchdog() == null ? null : parse(fencing.getWatchdog().getTimeout(),
                DurationFormat::parseWholeUnit, FENCING + ".watchdog.timeout", violations);
        QuorumLossAction action = parse(fencing.getQuorumLossAction(), QuorumLossAction::parse,
                FENCING + ".quorumLossAction", violations);
        Profile profile = parse(fencing.getProfile(), Profile::parse, FENCING + ".profile", violations);
        FencingQuorum quorum = fencing.getQuorum();
        Integer size = quorum == null ? null : quorumSize(quorum.getSize(), violations);
        List<TieBreakerKind> tieBreakers = quorum == null ? null : tieBreakers(quorum.getTieBreakers(), violations);
        TimingOverrides timings = fencing.getTimings() == null ? null : timings(fencing.getTimings(), violations);
        if (!violations.isEmpty()) {
            return new Mapping(null, violations);
        }
        return new Mapping(new FencingSpec(mode, timeout, action, profile, size, tieBreakers, timings), List.of());
    }

    /**
     * The NodeGroup's fencing spec.
     *
     * @throws InvalidPolicyException when a string does not parse
     * @throws IllegalArgumentException when fencing is off for the group
     */
    public static FencingSpec toFencingSpec(NodeGroup nodeGroup) {
        Mapping mapping = map(nodeGroup);
        if (!mapping.valid()) {
            throw new InvalidPolicyException(mapping.violations());
        }
        return mapping.spec();
    }

    /**
     * Maps and resolves the NodeGroup's fencing policy for {@code expectedMembers}.
     *
     * @throws InvalidPolicyException with every violation (parsing and policy rules)
     * @throws IllegalArgumentException when fencing is off for the group
     */
    public static ResolvedPolicy resolve(NodeGroup nodeGroup, int expectedMembers) {
        return PolicyResolver.resolve(toFencingSpec(nodeGroup), expectedMembers);
    }

    private static Integer quorumSize(IntOrString size, List<Violation> violations) {
        if (size == null || (size.getIntVal() == null && size.getStrVal() == null)) {
            return null;
        }
        if (size.getIntVal() != null) {
            return size.getIntVal();
        }
        String text = size.getStrVal();
        if (text.equals("Auto")) {
            return null;
        }
        if (text.matches("[0-9]{1,9}")) {
            return Integer.valueOf(text);
        }
        violations.add(new Violation(FENCING + ".quorum.size", "quorum size '" + text
                + "' is not valid; write Auto or a whole number such as 3"));
        return null;
    }

    private static List<TieBreakerKind> tieBreakers(List<String> names, List<Violation> violations) {
        if (names == null) {
            return null;
        }
        List<TieBreakerKind> out = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            out.add(name == null ? null
                    : parse(name, TieBreakerKind::parse, FENCING + ".quorum.tieBreakers[" + i + "]", violations));
        }
        return out;
    }

    private static TimingOverrides timings(FencingTimings t, List<Violation> v) {
        return new TimingOverrides(
                duration(t.getProbeInterval(), "probeInterval", v),
                duration(t.getProbeTimeout(), "probeTimeout", v),
                t.getSuspicionMult(),
                t.getSuspicionMaxTimeoutMult(),
                duration(t.getGossipInterval(), "gossipInterval", v),
                t.getGossipNodes(),
                t.getRetransmitMult(),
                duration(t.getPushPullInterval(), "pushPullInterval", v),
                duration(t.getHeartbeatInterval(), "heartbeatInterval", v),
                duration(t.getQuorumWindow(), "quorumWindow", v),
                t.getLocalHealthCap(),
                duration(t.getEvaluationTick(), "evaluationTick", v),
                duration(t.getFeedInterval(), "feedInterval", v),
                duration(t.getArmingDelay(), "armingDelay", v),
                duration(t.getFenceMargin(), "fenceMargin", v));
    }

    private static Duration duration(String text, String name, List<Violation> violations) {
        return parse(text, DurationFormat::parse, TIMINGS + name, violations);
    }

    private static <T> T parse(String text, Function<String, T> parser, String field, List<Violation> violations) {
        if (text == null) {
            return null;
        }
        try {
            return parser.apply(text);
        } catch (IllegalArgumentException e) {
            violations.add(new Violation(field, e.getMessage()));
            return null;
        }
    }
}
