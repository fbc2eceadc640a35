package dev.fencing.api.v1;

import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.FencingSpecReader;
import dev.fencing.policy.InvalidPolicyException;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.policy.ResolvedPolicy;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Maps a NodeGroup's {@code spec.fencing} (strings, as stored) to the policy module's {@link FencingSpec}, through
 * {@link FencingSpecReader} so the NodeGroup and the standalone agent file share one parser. Every string that does
 * not parse becomes a {@code Violation} with its CRD path ({@code spec.fencing...}); the rules themselves live in
 * {@link PolicyResolver}.
 */
public final class NodeGroupFencing {

    /** The path of the fencing block in a NodeGroup, the prefix of every violation's field. */
    public static final String PATH = "spec.fencing";

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
    public static FencingSpecReader.Result map(NodeGroup nodeGroup) {
        if (!fencingEnabled(nodeGroup)) {
            throw new IllegalArgumentException("NodeGroup " + nodeGroup.getMetadata().getName()
                    + " has no spec.fencing: fencing is off for it; check fencingEnabled() before mapping");
        }
        return map(nodeGroup.getSpec().getFencing());
    }

    /** Maps a {@code spec.fencing} object. */
    public static FencingSpecReader.Result map(Fencing fencing) {
        return FencingSpecReader.read(tree(Objects.requireNonNull(fencing, "fencing")), PATH);
    }

    /**
     * The NodeGroup's fencing spec.
     *
     * @throws InvalidPolicyException when a string does not parse
     * @throws IllegalArgumentException when fencing is off for the group
     */
    public static FencingSpec toFencingSpec(NodeGroup nodeGroup) {
        return map(nodeGroup).orThrow();
    }

    /**
     * Maps and resolves the NodeGroup's fencing policy for {@code expectedMembers}.
     *
     * @throws InvalidPolicyException with every violation (parsing or policy rules)
     * @throws IllegalArgumentException when fencing is off for the group
     */
    public static ResolvedPolicy resolve(NodeGroup nodeGroup, int expectedMembers) {
        return PolicyResolver.resolve(toFencingSpec(nodeGroup), expectedMembers);
    }

    /** The fencing block as the plain tree a YAML parser would produce; absent values are left out. */
    static Map<String, Object> tree(Fencing f) {
        Map<String, Object> out = new LinkedHashMap<>();
        put(out, "mode", f.getMode());
        if (f.getWatchdog() != null) {
            Map<String, Object> watchdog = new LinkedHashMap<>();
            put(watchdog, "timeout", f.getWatchdog().getTimeout());
            out.put("watchdog", watchdog);
        }
        put(out, "quorumLossAction", f.getQuorumLossAction());
        put(out, "profile", f.getProfile());
        if (f.getQuorum() != null) {
            Map<String, Object> quorum = new LinkedHashMap<>();
            IntOrString size = f.getQuorum().getSize();
            if (size != null) {
                put(quorum, "size", size.getIntVal() != null ? size.getIntVal() : size.getStrVal());
            }
            put(quorum, "tieBreakers", f.getQuorum().getTieBreakers());
            out.put("quorum", quorum);
        }
        FencingTimings t = f.getTimings();
        if (t != null) {
            Map<String, Object> timings = new LinkedHashMap<>();
            put(timings, "probeInterval", t.getProbeInterval());
            put(timings, "probeTimeout", t.getProbeTimeout());
            put(timings, "suspicionMult", t.getSuspicionMult());
            put(timings, "suspicionMaxTimeoutMult", t.getSuspicionMaxTimeoutMult());
            put(timings, "gossipInterval", t.getGossipInterval());
            put(timings, "gossipNodes", t.getGossipNodes());
            put(timings, "retransmitMult", t.getRetransmitMult());
            put(timings, "pushPullInterval", t.getPushPullInterval());
            put(timings, "heartbeatInterval", t.getHeartbeatInterval());
            put(timings, "quorumWindow", t.getQuorumWindow());
            put(timings, "localHealthCap", t.getLocalHealthCap());
            put(timings, "evaluationTick", t.getEvaluationTick());
            put(timings, "feedInterval", t.getFeedInterval());
            put(timings, "armingDelay", t.getArmingDelay());
            put(timings, "fenceMargin", t.getFenceMargin());
            out.put("timings", timings);
        }
        FencingStorm storm = f.getStorm();
        if (storm != null) {
            Map<String, Object> limits = new LinkedHashMap<>();
            IntOrString minHealthy = storm.getMinHealthy();
            if (minHealthy != null) {
                put(limits, "minHealthy", minHealthy.getIntVal() != null ? minHealthy.getIntVal()
                        : minHealthy.getStrVal());
            }
            put(limits, "maxConcurrent", storm.getMaxConcurrent());
            put(limits, "cooldown", storm.getCooldown());
            out.put("storm", limits);
        }
        put(out, "afterFence", f.getAfterFence());
        put(out, "gossipLabel", f.getGossipLabel());
        put(out, "networks", f.getNetworks());
        put(out, "reachability", f.getReachability());
        if (f.getDisk() != null) {
            Map<String, Object> disk = new LinkedHashMap<>();
            put(disk, "device", f.getDisk().getDevice());
            put(disk, "required", f.getDisk().getRequired());
            put(disk, "ioTimeout", f.getDisk().getIoTimeout());
            out.put("disk", disk);
        }
        return out;
    }

    private static void put(Map<String, Object> map, String key, Object value) {
        if (value != null) {
            map.put(key, value);
        }
    }
}
