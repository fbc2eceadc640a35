package dev.fencing.policy;

import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.fencing.v1.TieBreaker;
import dev.fencing.proto.fencing.v1.Timings;
import dev.fencing.proto.nodemanager.v1.FencingPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Maps resolved policies to and from their wire form ({@code nodemanager.v1.FencingPolicy},
 * {@code fencing.v1.Timings} and the fencing.v1 enums).
 *
 * <p>{@code t_stop} and {@code safe_to_assume_fenced_delay} are written for display; when reading they are recomputed
 * from the other timings (the formula has one home: {@link ResolvedTimings}).
 */
public final class PolicyProtos {

    private PolicyProtos() {
    }

    /** The wire form of a resolved policy ({@code expected} is carried by the member list, not the policy). */
    public static FencingPolicy toProto(ResolvedPolicy policy) {
        FencingPolicy.Builder builder = FencingPolicy.newBuilder()
                .setMode(toProto(policy.mode()))
                .setQuorumLossAction(toProto(policy.quorumLossAction()))
                .setQuorumSize(policy.quorumSize())
                .setTimings(toProto(policy.timings()))
                .setNoGossipLabel(policy.gossipLabel() == GossipLabel.NONE);
        policy.tieBreakers().forEach(kind -> builder.addTieBreakers(toProto(kind)));
        // One network: nothing is added, so the wire is exactly what it was before networks existed.
        if (policy.networks().multiple()) {
            builder.addAllNetworks(policy.networks().texts()).setReachability(toProto(policy.networks().reachability()));
        }
        policy.disk().ifPresent(d -> builder.setDisk(dev.fencing.proto.nodemanager.v1.DiskArbiter.newBuilder()
                .setDevice(d.device()).setRequired(d.required()).setIoTimeout(toProto(d.ioTimeout()))));
        return builder.build();
    }

    /**
     * Reads a policy received from the controller.
     *
     * @param expected the number of expected members (from the member list it came with)
     * @throws IllegalArgumentException naming the field when an enum is unspecified or unknown, a timing is missing,
     *                                  or the policy breaks {@link PolicyResolver#verify} (e.g. a quorum size that is
     *                                  not a strict majority of {@code expected})
     */
    public static ResolvedPolicy fromProto(FencingPolicy policy, int expected) {
        if (!policy.hasTimings()) {
            throw new IllegalArgumentException(
                    "FencingPolicy.timings is missing; the controller must send every timing");
        }
        List<TieBreakerKind> tieBreakers = new ArrayList<>();
        for (int i = 0; i < policy.getTieBreakersCount(); i++) {
            tieBreakers.add(fromProto(policy.getTieBreakers(i), "FencingPolicy.tie_breakers[" + i + "]"));
        }
        GossipNetworks networks;
        try {
            networks = GossipNetworks.parse(policy.getNetworksList(), fromProto(policy.getReachability()));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("FencingPolicy." + e.getMessage(), e);
        }
        ResolvedPolicy resolved = new ResolvedPolicy(fromProto(policy.getMode()),
                fromProto(policy.getQuorumLossAction()), expected, policy.getQuorumSize(), tieBreakers,
                fromProto(policy.getTimings()),
                policy.getNoGossipLabel() ? GossipLabel.NONE : GossipLabel.GROUP_NAME, networks, policy.hasDisk()
                        ? java.util.Optional.of(new ResolvedDisk(policy.getDisk().getDevice(),
                                policy.getDisk().getRequired(), policy.getDisk().hasIoTimeout()
                                        ? fromProto(policy.getDisk().getIoTimeout()) : DiskSpec.DEFAULT_IO_TIMEOUT))
                        : java.util.Optional.empty());
        List<Violation> broken = PolicyResolver.verify(resolved);
        if (!broken.isEmpty()) {
            throw new IllegalArgumentException("FencingPolicy for " + expected + " expected members breaks the policy "
                    + "invariants, so it was not produced by PolicyResolver; keep the previous policy and report it: "
                    + broken.stream().map(Violation::toString).collect(java.util.stream.Collectors.joining("; ")));
        }
        return resolved;
    }

    /** The wire form of resolved timings, including the derived t_stop and safe-to-assume-fenced delay. */
    public static Timings toProto(ResolvedTimings t) {
        return Timings.newBuilder()
                .setProfile(t.profile())
                .setProbeInterval(toProto(t.probeInterval()))
                .setProbeTimeout(toProto(t.probeTimeout()))
                .setSuspicionMult(t.suspicionMult())
                .setSuspicionMaxTimeoutMult(t.suspicionMaxTimeoutMult())
                .setGossipInterval(toProto(t.gossipInterval()))
                .setGossipNodes(t.gossipNodes())
                .setRetransmitMult(t.retransmitMult())
                .setPushPullInterval(toProto(t.pushPullInterval()))
                .setHeartbeatInterval(toProto(t.heartbeatInterval()))
                .setQuorumWindow(toProto(t.quorumWindow()))
                .setLocalHealthCap(t.localHealthCap())
                .setEvaluationTick(toProto(t.evaluationTick()))
                .setFeedInterval(toProto(t.feedInterval()))
                .setWatchdogTimeout(toProto(t.watchdogTimeout()))
                .setArmingDelay(toProto(t.armingDelay()))
                .setTStop(toProto(t.tStop()))
                .setFenceMargin(toProto(t.fenceMargin()))
                .setSafeToAssumeFencedDelay(toProto(t.safeToAssumeFencedDelay()))
                .build();
    }

    /**
     * Reads timings from the wire; t_stop and safe_to_assume_fenced_delay are recomputed, not read.
     *
     * @throws IllegalArgumentException naming the first missing duration field
     */
    public static ResolvedTimings fromProto(Timings t) {
        return new ResolvedTimings(
                t.getProfile(),
                required(t.hasProbeInterval(), t.getProbeInterval(), "probe_interval"),
                required(t.hasProbeTimeout(), t.getProbeTimeout(), "probe_timeout"),
                t.getSuspicionMult(),
                t.getSuspicionMaxTimeoutMult(),
                required(t.hasGossipInterval(), t.getGossipInterval(), "gossip_interval"),
                t.getGossipNodes(),
                t.getRetransmitMult(),
                required(t.hasPushPullInterval(), t.getPushPullInterval(), "push_pull_interval"),
                required(t.hasHeartbeatInterval(), t.getHeartbeatInterval(), "heartbeat_interval"),
                required(t.hasQuorumWindow(), t.getQuorumWindow(), "quorum_window"),
                t.getLocalHealthCap(),
                required(t.hasEvaluationTick(), t.getEvaluationTick(), "evaluation_tick"),
                required(t.hasFeedInterval(), t.getFeedInterval(), "feed_interval"),
                required(t.hasWatchdogTimeout(), t.getWatchdogTimeout(), "watchdog_timeout"),
                required(t.hasArmingDelay(), t.getArmingDelay(), "arming_delay"),
                required(t.hasFenceMargin(), t.getFenceMargin(), "fence_margin"));
    }

    /** The wire enum of a mode. */
    public static FencingMode toProto(Mode mode) {
        return switch (mode) {
            case WATCHDOG -> FencingMode.FENCING_MODE_WATCHDOG;
            case NOTIFY -> FencingMode.FENCING_MODE_NOTIFY;
        };
    }

    /**
     * The mode of a wire enum.
     *
     * @throws IllegalArgumentException for UNSPECIFIED or an unknown number
     */
    public static Mode fromProto(FencingMode mode) {
        return switch (mode) {
            case FENCING_MODE_WATCHDOG -> Mode.WATCHDOG;
            case FENCING_MODE_NOTIFY -> Mode.NOTIFY;
            default -> throw new IllegalArgumentException("FencingPolicy.mode is " + mode
                    + "; the controller must send FENCING_MODE_WATCHDOG or FENCING_MODE_NOTIFY");
        };
    }

    /** The wire enum of a quorum-loss action. */
    public static dev.fencing.proto.fencing.v1.QuorumLossAction toProto(QuorumLossAction action) {
        return switch (action) {
            case FENCE -> dev.fencing.proto.fencing.v1.QuorumLossAction.QUORUM_LOSS_ACTION_FENCE;
            case EXCLUDE -> dev.fencing.proto.fencing.v1.QuorumLossAction.QUORUM_LOSS_ACTION_EXCLUDE;
            case WAIT -> dev.fencing.proto.fencing.v1.QuorumLossAction.QUORUM_LOSS_ACTION_WAIT;
        };
    }

    /**
     * The quorum-loss action of a wire enum.
     *
     * @throws IllegalArgumentException for UNSPECIFIED or an unknown number
     */
    public static QuorumLossAction fromProto(dev.fencing.proto.fencing.v1.QuorumLossAction action) {
        return switch (action) {
            case QUORUM_LOSS_ACTION_FENCE -> QuorumLossAction.FENCE;
            case QUORUM_LOSS_ACTION_EXCLUDE -> QuorumLossAction.EXCLUDE;
            case QUORUM_LOSS_ACTION_WAIT -> QuorumLossAction.WAIT;
            default -> throw new IllegalArgumentException("FencingPolicy.quorum_loss_action is " + action
                    + "; the controller must send FENCE, EXCLUDE or WAIT");
        };
    }

    /** The wire enum of a reachability rule. */
    public static dev.fencing.proto.fencing.v1.Reachability toProto(Reachability reachability) {
        return switch (reachability) {
            case ANY -> dev.fencing.proto.fencing.v1.Reachability.REACHABILITY_ANY;
            case ALL -> dev.fencing.proto.fencing.v1.Reachability.REACHABILITY_ALL;
        };
    }

    /**
     * The reachability rule of a wire enum; UNSPECIFIED (a controller that predates networks) is Any.
     *
     * @throws IllegalArgumentException for an unknown number
     */
    public static Reachability fromProto(dev.fencing.proto.fencing.v1.Reachability reachability) {
        return switch (reachability) {
            case REACHABILITY_UNSPECIFIED, REACHABILITY_ANY -> Reachability.ANY;
            case REACHABILITY_ALL -> Reachability.ALL;
            default -> throw new IllegalArgumentException("FencingPolicy.reachability is " + reachability
                    + "; the controller must send REACHABILITY_ANY or REACHABILITY_ALL");
        };
    }

    /** The wire enum of a tie-breaker. */
    public static TieBreaker toProto(TieBreakerKind kind) {
        return switch (kind) {
            case CONTROL_PLANE -> TieBreaker.TIE_BREAKER_CONTROL_PLANE;
            case LOWEST_NAME -> TieBreaker.TIE_BREAKER_LOWEST_NAME;
            case DISK -> TieBreaker.TIE_BREAKER_DISK;
            case API_REACHABLE -> TieBreaker.TIE_BREAKER_API_REACHABLE;
        };
    }

    /**
     * The tie-breaker of a wire enum.
     *
     * @throws IllegalArgumentException for UNSPECIFIED or an unknown number
     */
    public static TieBreakerKind fromProto(TieBreaker kind) {
        return fromProto(kind, "tie-breaker");
    }

    /** A {@code google.protobuf.Duration} of a Java duration. */
    public static com.google.protobuf.Duration toProto(Duration duration) {
        return com.google.protobuf.Duration.newBuilder()
                .setSeconds(duration.getSeconds())
                .setNanos(duration.getNano())
                .build();
    }

    /** A Java duration of a {@code google.protobuf.Duration}. */
    public static Duration fromProto(com.google.protobuf.Duration duration) {
        return Duration.ofSeconds(duration.getSeconds(), duration.getNanos());
    }

    private static TieBreakerKind fromProto(TieBreaker kind, String field) {
        return switch (kind) {
            case TIE_BREAKER_CONTROL_PLANE -> TieBreakerKind.CONTROL_PLANE;
            case TIE_BREAKER_LOWEST_NAME -> TieBreakerKind.LOWEST_NAME;
            case TIE_BREAKER_DISK -> TieBreakerKind.DISK;
            case TIE_BREAKER_API_REACHABLE -> TieBreakerKind.API_REACHABLE;
            default -> throw new IllegalArgumentException(field + " is " + kind
                    + "; the controller must send a specified tie-breaker");
        };
    }

    private static Duration required(boolean present, com.google.protobuf.Duration value, String field) {
        if (!present) {
            throw new IllegalArgumentException(
                    "Timings." + field + " is missing; the controller must send every timing");
        }
        return fromProto(value);
    }
}
