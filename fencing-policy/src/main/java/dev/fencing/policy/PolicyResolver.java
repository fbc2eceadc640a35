package dev.fencing.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The single home of fencing-policy resolution: profile / Auto / overrides → concrete timings, quorum size,
 * validation with messages that say what to change, and the warnings for accepted-but-risky choices.
 *
 * <p>Derived defaults follow the effective (possibly overridden) values they derive from: overriding
 * {@code probeInterval} moves the default {@code probeTimeout}, {@code quorumWindow}, {@code heartbeatInterval},
 * {@code evaluationTick} and {@code armingDelay} with it. See fencing-policy/README.md for the table.
 */
public final class PolicyResolver {

    /**
     * Shortest accepted watchdog timeout for every profile but {@code Critical} (and for {@code Auto} at every group
     * size): below it a JVM pause or the devices' 1 s granularity resets healthy nodes, and with these profiles
     * {@code T_stop}, not the device timeout, dominates the time to safe-to-assume-fenced anyway.
     */
    public static final Duration MIN_WATCHDOG_TIMEOUT = Duration.ofSeconds(5);
    /**
     * Shortest accepted watchdog timeout, with profile {@code Critical} only: softdog accepts 1 s, but at 2 s a feed
     * every {@code < timeout / 3} (at most 0.66 s) still survives one missed feed plus the device's 1 s granularity.
     */
    public static final Duration MIN_CRITICAL_WATCHDOG_TIMEOUT = Duration.ofSeconds(2);
    /** Longest accepted watchdog timeout: recovery of a fenced node's workloads waits at least this long. */
    public static final Duration MAX_WATCHDOG_TIMEOUT = Duration.ofHours(1);
    /** Longest accepted timing override: anything longer is almost certainly a unit mistake. */
    public static final Duration MAX_TIMING = Duration.ofHours(1);
    /** Largest accepted count override (multipliers, fan-out). */
    public static final int MAX_COUNT = 1000;
    /** Lowest accepted local-health cap: the window never shrinks. */
    public static final double MIN_LOCAL_HEALTH_CAP = 1.0;
    /** Highest accepted local-health cap: beyond it T_stop grows more than local stalls justify. */
    public static final double MAX_LOCAL_HEALTH_CAP = 4.0;

    /** Default probe timeout as a share of the probe interval (Deckhouse gen-2: 200ms of 500ms). */
    static final double PROBE_TIMEOUT_SHARE = 0.4;
    /** memberlist DefaultLANConfig SuspicionMaxTimeoutMult. */
    static final int DEFAULT_SUSPICION_MAX_TIMEOUT_MULT = 6;
    /** memberlist DefaultLANConfig GossipNodes. */
    static final int DEFAULT_GOSSIP_NODES = 3;
    /** memberlist DefaultLANConfig RetransmitMult. */
    static final int DEFAULT_RETRANSMIT_MULT = 4;
    /** memberlist DefaultLANConfig PushPullInterval (memberlist scales it up itself for large clusters). */
    static final Duration DEFAULT_PUSH_PULL_INTERVAL = Duration.ofSeconds(30);
    /** Default quorum window in probe intervals, at most {@link #MAX_DEFAULT_QUORUM_WINDOW}. */
    static final int WINDOW_PROBE_INTERVALS = 4;
    /**
     * Longest default quorum window: keeps {@code T_stop} = 6 s × 1.5 + 100 ms = 9.1 s at every group size (the
     * window only has to hold a few heartbeat round trips, or relayed chains of them, never a suspicion timeout).
     */
    static final Duration MAX_DEFAULT_QUORUM_WINDOW = Duration.ofSeconds(6);
    /** Default heartbeats per quorum window: three consecutive losses still leave one round trip in the window. */
    static final int HEARTBEATS_PER_WINDOW = 4;
    /**
     * Largest group whose agents heartbeat every other member directly. Larger groups relay reach digests over an
     * overlay of O(log N) neighbours per node (fencing-agent {@code Overlay}), where evidence crosses several hops.
     */
    public static final int MAX_ALL_TO_ALL_MEMBERS = 16;
    /**
     * Default heartbeats per quorum window in a relayed group: each hop adds about one heartbeat interval to the age
     * of relayed evidence, so at four hops (N=1000) half the window is still left.
     */
    static final int RELAYED_HEARTBEATS_PER_WINDOW = 8;
    /** Default local-health cap. */
    static final double DEFAULT_LOCAL_HEALTH_CAP = 1.5;
    /** Default evaluation tick (never above the heartbeat interval). */
    static final Duration DEFAULT_EVALUATION_TICK = Duration.ofMillis(100);
    /** Default feed interval as a share of the watchdog timeout, at most {@link #MAX_DEFAULT_FEED_INTERVAL}. */
    static final int FEEDS_PER_TIMEOUT = 10;
    /** Deckhouse's WATCHDOG_FEED_INTERVAL. */
    static final Duration MAX_DEFAULT_FEED_INTERVAL = Duration.ofSeconds(5);
    /** Default arming delay in quorum windows. */
    static final int ARMING_DELAY_WINDOWS = 2;
    /** Default fence margin. */
    static final Duration DEFAULT_FENCE_MARGIN = Duration.ofSeconds(5);

    /**
     * What to do about a watchdog timeout outside 2s..1h; the CRD's CEL rule on {@code watchdog.timeout} carries the
     * same text.
     */
    public static final String WATCHDOG_TIMEOUT_RANGE_MESSAGE = "the watchdog timeout must be between 2s (profile "
            + "Critical only) and 1h; below 2s one late feed resets a healthy node; 60s is the Deckhouse default";
    /**
     * What to do about a watchdog timeout of 2s..4s with a profile other than Critical; the CRD's CEL rule on
     * {@code fencing} carries the same text.
     */
    public static final String WATCHDOG_TIMEOUT_NEEDS_CRITICAL_MESSAGE = "a watchdog timeout below 5s needs "
            + "profile Critical, which allows down to 2s; set profile: Critical, or a timeout of at least 5s";
    /** Why {@code Disk} without a device is refused; the CRD's CEL rule on {@code fencing} carries the same text. */
    public static final String DISK_NEEDS_DEVICE_MESSAGE = "the Disk tie-breaker needs disk.device, a shared block "
            + "device prepared with 'sbd -d DEVICE -4 90 create' (msgwait 90s covers the default timings; see "
            + "Choosing msgwait in the fencing-agent README); set disk.device or remove Disk";
    /** The accepted range of {@code disk.ioTimeout}. */
    static final Duration MIN_DISK_IO_TIMEOUT = Duration.ofMillis(100);
    static final Duration MAX_DISK_IO_TIMEOUT = Duration.ofSeconds(60);

    /** The path of the fencing block in a NodeGroup; the default prefix of every violation's field. */
    public static final String NODE_GROUP_PATH = "spec.fencing";

    private PolicyResolver() {
    }

    /**
     * Every problem of {@code spec} for a group of {@code expectedMembers}; empty when it can be resolved.
     *
     * @param expectedMembers expected members of the group, this node included (0 for an empty group)
     * @throws IllegalArgumentException when expectedMembers is negative (a caller bug, not a user error)
     */
    public static List<Violation> validate(FencingSpec spec, int expectedMembers) {
        return validate(spec, expectedMembers, NODE_GROUP_PATH);
    }

    /**
     * As {@link #validate(FencingSpec, int)}, with violation fields under {@code path} instead of
     * {@code spec.fencing} (e.g. {@code fencing} for a standalone agent file).
     */
    public static List<Violation> validate(FencingSpec spec, int expectedMembers, String path) {
        requireExpected(expectedMembers);
        List<Violation> out = new ArrayList<>();
        if (spec.effectiveQuorumLossAction() == QuorumLossAction.FENCE && spec.effectiveMode() != Mode.WATCHDOG) {
            out.add(new Violation(path + ".quorumLossAction", "Fence needs mode Watchdog, but mode is "
                    + spec.effectiveMode().crdValue() + "; set mode: Watchdog, or quorumLossAction: Exclude or Wait"));
        }
        boolean timeoutValid = checkWatchdogTimeout(spec.effectiveWatchdogTimeout(), spec.effectiveProfile(), path,
                out);
        checkQuorumSize(spec.quorumSize(), expectedMembers, path, out);
        checkTieBreakers(spec.effectiveTieBreakers(), path, out);
        checkDisk(spec, path, out);
        TimingOverrides o = spec.effectiveTimings();
        int before = out.size();
        checkOverrides(o, path + ".timings.", out);
        if (out.size() == before && timeoutValid) {
            checkRelations(o, effectiveTimings(spec, expectedMembers), path + ".timings.", out);
        }
        return List.copyOf(out);
    }

    /**
     * Resolves {@code spec} for a group of {@code expectedMembers}.
     *
     * @throws InvalidPolicyException carrying every violation when {@link #validate} finds any
     * @throws IllegalArgumentException when expectedMembers is negative
     */
    public static ResolvedPolicy resolve(FencingSpec spec, int expectedMembers) {
        return resolve(spec, expectedMembers, NODE_GROUP_PATH);
    }

    /** As {@link #resolve(FencingSpec, int)}, with violation fields under {@code path}. */
    public static ResolvedPolicy resolve(FencingSpec spec, int expectedMembers, String path) {
        List<Violation> violations = validate(spec, expectedMembers, path);
        if (!violations.isEmpty()) {
            throw new InvalidPolicyException(violations);
        }
        int quorum = spec.quorumSize() != null ? spec.quorumSize() : autoQuorumSize(expectedMembers);
        Optional<ResolvedDisk> disk = spec.disk() == null || spec.disk().device() == null ? Optional.empty()
                : Optional.of(new ResolvedDisk(spec.disk().device(), spec.disk().effectiveRequired(),
                        spec.disk().effectiveIoTimeout()));
        return new ResolvedPolicy(spec.effectiveMode(), spec.effectiveQuorumLossAction(), expectedMembers, quorum,
                spec.effectiveTieBreakers(), effectiveTimings(spec, expectedMembers), spec.effectiveGossipLabel(),
                spec.effectiveNetworks(), disk);
    }

    /**
     * Accepted but risky choices, each with the field and what to consider instead: {@code APIReachable} (not
     * split-brain safe), an even group without tie-breakers (an exact half split fences both halves).
     *
     * @throws IllegalArgumentException when expectedMembers is negative
     */
    public static List<Violation> warnings(FencingSpec spec, int expectedMembers) {
        return warnings(spec, expectedMembers, NODE_GROUP_PATH);
    }

    /** As {@link #warnings(FencingSpec, int)}, with fields under {@code path}. */
    public static List<Violation> warnings(FencingSpec spec, int expectedMembers, String path) {
        requireExpected(expectedMembers);
        List<Violation> out = new ArrayList<>();
        List<TieBreakerKind> tieBreakers = spec.effectiveTieBreakers();
        for (int i = 0; i < tieBreakers.size(); i++) {
            TieBreakerKind kind = tieBreakers.get(i);
            if (kind == TieBreakerKind.API_REACHABLE) {
                out.add(new Violation(path + ".quorum.tieBreakers[" + i + "]",
                        "APIReachable is not split-brain safe: both "
                        + "halves of an even split keep quorum when both reach the Kubernetes API; use LowestName "
                        + "(which always answers) or ControlPlane instead"));
            }
        }
        if (expectedMembers > 0 && expectedMembers % 2 == 0 && tieBreakers.isEmpty()
                && spec.quorumSize() == null) {
            out.add(new Violation(path + ".quorum.tieBreakers", "the group has an even number of members ("
                    + expectedMembers + ") and no tie-breakers, so an exact half split fences both halves; "
                    + "add ControlPlane or LowestName"));
        }
        return List.copyOf(out);
    }

    /**
     * Checks the invariants every resolved policy satisfies (what {@link #resolve} guarantees), for a policy that
     * arrived from elsewhere, e.g. over the wire: quorum a strict majority of {@code expected} and at most it,
     * positive durations and counts, {@code probeTimeout < probeInterval}, {@code heartbeatInterval < quorumWindow},
     * {@code evaluationTick ≤ heartbeatInterval}, {@code feedInterval < watchdogTimeout / 3},
     * {@code armingDelay ≥ quorumWindow}, {@code localHealthCap} in [1, 4], a whole-second watchdog timeout in
     * 2s..1h (the profile's own floor is a user-facing choice checked by {@link #validate}; the label does not carry
     * the profile reliably), no {@code Disk} tie-breaker without a disk. A list of several tie-breakers passes here
     * (an agent never asks past the first). Fields are named as in
     * {@link ResolvedPolicy} (e.g. {@code timings.feedInterval}).
     */
    public static List<Violation> verify(ResolvedPolicy policy) {
        List<Violation> out = new ArrayList<>();
        int expected = policy.expected();
        if (expected < 0) {
            out.add(new Violation("expected", "expected " + expected + " is negative"));
        } else if (2L * policy.quorumSize() <= expected || policy.quorumSize() > Math.max(1, expected)) {
            out.add(new Violation("quorumSize", "quorum size " + policy.quorumSize() + " is not a strict majority of "
                    + expected + " expected members (or exceeds them)"));
        }
        if (policy.quorumLossAction() == QuorumLossAction.FENCE && policy.mode() != Mode.WATCHDOG) {
            out.add(new Violation("quorumLossAction", "Fence with mode " + policy.mode().crdValue()));
        }
        if (policy.tieBreakers().size() != policy.tieBreakers().stream().distinct().count()) {
            out.add(new Violation("tieBreakers", "tie-breakers repeat: " + policy.tieBreakers()));
        }
        if (policy.tieBreakers().contains(TieBreakerKind.DISK) && policy.disk().isEmpty()) {
            out.add(new Violation("tieBreakers", DISK_NEEDS_DEVICE_MESSAGE));
        }
        policy.disk().ifPresent(d -> {
            if (!d.device().startsWith("/")) {
                out.add(new Violation("disk.device", "device '" + d.device() + "' is not an absolute path"));
            }
            if (d.ioTimeout().compareTo(MIN_DISK_IO_TIMEOUT) < 0 || d.ioTimeout().compareTo(MAX_DISK_IO_TIMEOUT) > 0) {
                out.add(new Violation("disk.ioTimeout", "ioTimeout " + d.ioTimeout() + " is outside 100ms..60s"));
            }
        });
        ResolvedTimings t = policy.timings();
        String p = "timings.";
        for (var d : List.of(Map.entry("probeInterval", t.probeInterval()), Map.entry("probeTimeout", t.probeTimeout()),
                Map.entry("gossipInterval", t.gossipInterval()), Map.entry("pushPullInterval", t.pushPullInterval()),
                Map.entry("heartbeatInterval", t.heartbeatInterval()), Map.entry("quorumWindow", t.quorumWindow()),
                Map.entry("evaluationTick", t.evaluationTick()), Map.entry("feedInterval", t.feedInterval()),
                Map.entry("watchdogTimeout", t.watchdogTimeout()), Map.entry("armingDelay", t.armingDelay()))) {
            if (d.getValue().isNegative() || d.getValue().isZero()) {
                out.add(new Violation(p + d.getKey(), d.getKey() + " " + d.getValue() + " is not positive"));
            }
        }
        if (t.fenceMargin().isNegative()) {
            out.add(new Violation(p + "fenceMargin", "fenceMargin " + t.fenceMargin() + " is negative"));
        }
        for (var c : List.of(Map.entry("suspicionMult", t.suspicionMult()),
                Map.entry("suspicionMaxTimeoutMult", t.suspicionMaxTimeoutMult()),
                Map.entry("gossipNodes", t.gossipNodes()), Map.entry("retransmitMult", t.retransmitMult()))) {
            if (c.getValue() < 1) {
                out.add(new Violation(p + c.getKey(), c.getKey() + " " + c.getValue() + " is below 1"));
            }
        }
        if (!(t.localHealthCap() >= MIN_LOCAL_HEALTH_CAP && t.localHealthCap() <= MAX_LOCAL_HEALTH_CAP)) {
            out.add(new Violation(p + "localHealthCap",
                    "localHealthCap " + t.localHealthCap() + " is outside 1.0..4.0"));
        }
        if (t.watchdogTimeout().toNanosPart() != 0 || t.watchdogTimeout().compareTo(MIN_CRITICAL_WATCHDOG_TIMEOUT) < 0
                || t.watchdogTimeout().compareTo(MAX_WATCHDOG_TIMEOUT) > 0) {
            out.add(new Violation(p + "watchdogTimeout", "watchdogTimeout " + t.watchdogTimeout() + ": "
                    + WATCHDOG_TIMEOUT_RANGE_MESSAGE));
        }
        if (!out.isEmpty()) {
            return List.copyOf(out);
        }
        if (t.probeTimeout().compareTo(t.probeInterval()) >= 0) {
            out.add(new Violation(p + "probeTimeout", "probeTimeout is not shorter than probeInterval"));
        }
        if (t.heartbeatInterval().compareTo(t.quorumWindow()) >= 0) {
            out.add(new Violation(p + "heartbeatInterval", "heartbeatInterval is not shorter than quorumWindow"));
        }
        if (t.evaluationTick().compareTo(t.heartbeatInterval()) > 0) {
            out.add(new Violation(p + "evaluationTick", "evaluationTick exceeds heartbeatInterval"));
        }
        if (t.feedInterval().multipliedBy(3).compareTo(t.watchdogTimeout()) >= 0) {
            out.add(new Violation(p + "feedInterval", "feedInterval is not shorter than watchdogTimeout / 3"));
        }
        if (t.armingDelay().compareTo(t.quorumWindow()) < 0) {
            out.add(new Violation(p + "armingDelay", "armingDelay is shorter than quorumWindow"));
        }
        return List.copyOf(out);
    }

    /** Auto quorum: {@code floor(expected/2)+1}, the smallest size two disjoint sides cannot both reach. */
    public static int autoQuorumSize(int expectedMembers) {
        requireExpected(expectedMembers);
        return expectedMembers / 2 + 1;
    }

    /** The timings a spec resolves to, without validation (overrides are taken as they are). */
    static ResolvedTimings effectiveTimings(FencingSpec spec, int expectedMembers) {
        Profile profile = spec.effectiveProfile();
        int tableSize = profile == Profile.AUTO ? expectedMembers : profile.anchorSize();
        AdrSizeTable.Scaled base = AdrSizeTable.at(tableSize);
        TimingOverrides o = spec.effectiveTimings();
        Duration watchdogTimeout = spec.effectiveWatchdogTimeout();

        Duration probeInterval = or(o.probeInterval(), base.probeInterval());
        Duration probeTimeout = or(o.probeTimeout(),
                Duration.ofMillis(Math.round(probeInterval.toMillis() * PROBE_TIMEOUT_SHARE)));
        Duration quorumWindow = or(o.quorumWindow(),
                min(MAX_DEFAULT_QUORUM_WINDOW, probeInterval.multipliedBy(WINDOW_PROBE_INTERVALS)));
        Duration heartbeatInterval = or(o.heartbeatInterval(), quorumWindow.dividedBy(
                expectedMembers > MAX_ALL_TO_ALL_MEMBERS ? RELAYED_HEARTBEATS_PER_WINDOW : HEARTBEATS_PER_WINDOW));
        Duration evaluationTick = or(o.evaluationTick(), min(DEFAULT_EVALUATION_TICK, heartbeatInterval));
        Duration feedInterval = or(o.feedInterval(),
                min(MAX_DEFAULT_FEED_INTERVAL, watchdogTimeout.dividedBy(FEEDS_PER_TIMEOUT)));
        Duration armingDelay = or(o.armingDelay(), quorumWindow.multipliedBy(ARMING_DELAY_WINDOWS));

        String label = (profile == Profile.AUTO ? "Auto(n=" + expectedMembers + ")" : profile.crdValue())
                + (o.any() ? "+overrides" : "");
        return new ResolvedTimings(label,
                probeInterval,
                probeTimeout,
                or(o.suspicionMult(), base.suspicionMult()),
                or(o.suspicionMaxTimeoutMult(), DEFAULT_SUSPICION_MAX_TIMEOUT_MULT),
                or(o.gossipInterval(), base.gossipInterval()),
                or(o.gossipNodes(), DEFAULT_GOSSIP_NODES),
                or(o.retransmitMult(), DEFAULT_RETRANSMIT_MULT),
                or(o.pushPullInterval(), DEFAULT_PUSH_PULL_INTERVAL),
                heartbeatInterval,
                quorumWindow,
                or(o.localHealthCap(), DEFAULT_LOCAL_HEALTH_CAP),
                evaluationTick,
                feedInterval,
                watchdogTimeout,
                armingDelay,
                or(o.fenceMargin(), DEFAULT_FENCE_MARGIN));
    }

    /** The shortest watchdog timeout {@code profile} accepts: 2s for Critical, 5s for the others and for Auto. */
    public static Duration minWatchdogTimeout(Profile profile) {
        return profile == Profile.CRITICAL ? MIN_CRITICAL_WATCHDOG_TIMEOUT : MIN_WATCHDOG_TIMEOUT;
    }

    private static boolean checkWatchdogTimeout(Duration timeout, Profile profile, String path, List<Violation> out) {
        String field = path + ".watchdog.timeout";
        String shown = DurationFormat.format(timeout.isNegative() ? Duration.ZERO : timeout);
        if (timeout.isNegative() || timeout.toNanosPart() != 0) {
            out.add(new Violation(field, "watchdog timeout " + (timeout.isNegative() ? timeout : shown)
                    + " is not a whole number of seconds; watchdog devices count whole seconds, write e.g. 60s"));
            return false;
        }
        // Auto keeps 5s even where it resolves to the Critical row (N <= 3): validity must not depend on the group
        // size, or a node joining would invalidate a running policy, and the CRD's CEL rule cannot see the size.
        Duration min = minWatchdogTimeout(profile);
        if (timeout.compareTo(min) < 0 || timeout.compareTo(MAX_WATCHDOG_TIMEOUT) > 0) {
            boolean outsideAnyRange = timeout.compareTo(MAX_WATCHDOG_TIMEOUT) > 0 || profile == Profile.CRITICAL;
            out.add(new Violation(field, "watchdog timeout " + shown + " is outside " + fmt(min) + ".."
                    + fmt(MAX_WATCHDOG_TIMEOUT) + " for profile " + profile.crdValue() + "; "
                    + (outsideAnyRange ? WATCHDOG_TIMEOUT_RANGE_MESSAGE : WATCHDOG_TIMEOUT_NEEDS_CRITICAL_MESSAGE)));
            return false;
        }
        return true;
    }

    private static void checkQuorumSize(Integer size, int expected, String path, List<Violation> out) {
        String field = path + ".quorum.size";
        if (size == null) {
            return;
        }
        if (size < 1) {
            out.add(new Violation(field, "quorum size " + size + " must be at least 1; use Auto (= "
                    + autoQuorumSize(expected) + " for " + expected + " expected members) or a number in "
                    + autoQuorumSize(expected) + ".." + Math.max(expected, autoQuorumSize(expected))));
        } else if (2L * size <= expected) {
            out.add(new Violation(field, "quorum size " + size + " is not a majority of " + expected
                    + " expected members, so two disjoint sides could both hold quorum; use Auto or at least "
                    + autoQuorumSize(expected)));
        } else if (size > expected) {
            out.add(new Violation(field, "quorum size " + size + " exceeds the " + expected
                    + " expected members, so no node can ever hold quorum and every armed node would fence; use Auto"
                    + (expected > 0 ? " or at most " + expected : "")));
        }
    }

    private static void checkDisk(FencingSpec spec, String path, List<Violation> out) {
        DiskSpec disk = spec.disk();
        boolean hasDevice = disk != null && disk.device() != null;
        int index = spec.effectiveTieBreakers().indexOf(TieBreakerKind.DISK);
        if (index >= 0 && !hasDevice) {
            out.add(new Violation(path + ".quorum.tieBreakers[" + index + "]", DISK_NEEDS_DEVICE_MESSAGE));
        }
        if (disk == null) {
            return;
        }
        if (!hasDevice) {
            out.add(new Violation(path + ".disk.device", "disk needs device, the absolute path of a shared block "
                    + "device prepared with 'sbd -d DEVICE -4 90 create' (msgwait 90s covers the default timings; "
                    + "see Choosing msgwait in the fencing-agent README); set it or remove disk"));
        } else if (!disk.device().startsWith("/") || disk.device().contains("\0")
                || disk.device().contains("/../") || disk.device().endsWith("/..")) {
            out.add(new Violation(path + ".disk.device", "device '" + disk.device() + "' is not an absolute path "
                    + "such as /dev/disk/by-id/wwn-0x5000c500a1b2c3d4"));
        }
        Duration io = disk.effectiveIoTimeout();
        if (io.compareTo(MIN_DISK_IO_TIMEOUT) < 0 || io.compareTo(MAX_DISK_IO_TIMEOUT) > 0) {
            out.add(new Violation(path + ".disk.ioTimeout", "ioTimeout " + DurationFormat.format(io)
                    + " is outside 100ms..60s; 5s suits most SANs"));
        }
    }

    private static void checkTieBreakers(List<TieBreakerKind> tieBreakers, String path, List<Violation> out) {
        for (int i = 0; i < tieBreakers.size(); i++) {
            TieBreakerKind kind = tieBreakers.get(i);
            String field = path + ".quorum.tieBreakers[" + i + "]";
            if (kind == null) {
                out.add(new Violation(field, "entry is empty; remove it or use one of " + CrdSpelling.allowed(
                        TieBreakerKind.values(), TieBreakerKind::crdValue)));
                continue;
            }
            int first = tieBreakers.indexOf(kind);
            if (first < i) {
                out.add(new Violation(field, kind.crdValue() + " is already listed at index " + first
                        + "; remove the repeat (each tie-breaker is asked once)"));
            } else if (i > 0 && tieBreakers.get(0) != null) {
                out.add(new Violation(field, chainRefused(tieBreakers.get(0), kind)));
            }
        }
    }

    /**
     * Why a second tie-breaker is refused. At an exact split each half takes the first answer down the list. A
     * tie-breaker with a referee (the controller, the disk, the API server) answers a half that reaches it and gives
     * no answer to one that does not, which then asks the next entry: both halves can hold quorum. After LowestName,
     * which always answers, nothing is asked.
     */
    private static String chainRefused(TieBreakerKind first, TieBreakerKind next) {
        if (first == TieBreakerKind.LOWEST_NAME) {
            return next.crdValue() + " after LowestName is never asked (LowestName always answers); list one "
                    + "tie-breaker";
        }
        return next.crdValue() + " after " + first.crdValue() + " is refused: " + first.crdValue() + " gives no "
                + "answer to a half that does not reach its referee while it answers the other half, and that half "
                + "would ask " + next.crdValue() + " and could hold quorum too (split brain); list one tie-breaker";
    }

    private static void checkOverrides(TimingOverrides o, String timings, List<Violation> out) {
        positive(o.probeInterval(), "probeInterval", timings, out);
        positive(o.probeTimeout(), "probeTimeout", timings, out);
        count(o.suspicionMult(), "suspicionMult", timings, out);
        count(o.suspicionMaxTimeoutMult(), "suspicionMaxTimeoutMult", timings, out);
        positive(o.gossipInterval(), "gossipInterval", timings, out);
        count(o.gossipNodes(), "gossipNodes", timings, out);
        count(o.retransmitMult(), "retransmitMult", timings, out);
        positive(o.pushPullInterval(), "pushPullInterval", timings, out);
        positive(o.heartbeatInterval(), "heartbeatInterval", timings, out);
        positive(o.quorumWindow(), "quorumWindow", timings, out);
        Double cap = o.localHealthCap();
        if (cap != null && !(cap >= MIN_LOCAL_HEALTH_CAP && cap <= MAX_LOCAL_HEALTH_CAP)) {
            out.add(new Violation(timings + "localHealthCap", "localHealthCap " + cap + " is outside "
                    + MIN_LOCAL_HEALTH_CAP + ".." + MAX_LOCAL_HEALTH_CAP + "; 1.0 disables stretching, "
                    + DEFAULT_LOCAL_HEALTH_CAP + " is the default"));
        }
        positive(o.evaluationTick(), "evaluationTick", timings, out);
        positive(o.feedInterval(), "feedInterval", timings, out);
        positive(o.armingDelay(), "armingDelay", timings, out);
        if (o.fenceMargin() != null && (o.fenceMargin().isNegative() || o.fenceMargin().compareTo(MAX_TIMING) > 0)) {
            out.add(new Violation(timings + "fenceMargin", "fenceMargin " + o.fenceMargin()
                    + " must be between 0s and 1h; " + DurationFormat.format(DEFAULT_FENCE_MARGIN)
                    + " is the default"));
        }
    }

    private static void checkRelations(TimingOverrides o, ResolvedTimings t, String timings, List<Violation> out) {
        if (t.probeTimeout().compareTo(t.probeInterval()) >= 0) {
            out.add(new Violation(timings + (o.probeTimeout() != null ? "probeTimeout" : "probeInterval"),
                    "probeTimeout " + fmt(t.probeTimeout()) + " must be shorter than probeInterval "
                            + fmt(t.probeInterval()) + "; lower probeTimeout or raise probeInterval"));
        }
        if (t.heartbeatInterval().compareTo(t.quorumWindow()) >= 0) {
            out.add(new Violation(timings + (o.heartbeatInterval() != null ? "heartbeatInterval" : "quorumWindow"),
                    "heartbeatInterval " + fmt(t.heartbeatInterval()) + " must be shorter than quorumWindow "
                            + fmt(t.quorumWindow()) + " (a round trip must fit in the window); lower "
                            + "heartbeatInterval to at most a quarter of quorumWindow or raise quorumWindow"));
        }
        if (t.evaluationTick().compareTo(t.heartbeatInterval()) > 0) {
            out.add(new Violation(timings + (o.evaluationTick() != null ? "evaluationTick" : "heartbeatInterval"),
                    "evaluationTick " + fmt(t.evaluationTick()) + " must not exceed heartbeatInterval "
                            + fmt(t.heartbeatInterval()) + "; lower evaluationTick or raise heartbeatInterval"));
        }
        if (t.feedInterval().multipliedBy(3).compareTo(t.watchdogTimeout()) >= 0) {
            out.add(new Violation(timings + "feedInterval", "feedInterval " + fmt(t.feedInterval())
                    + " must be shorter than a third of the watchdog timeout " + fmt(t.watchdogTimeout())
                    + " so two missed feeds never reset a healthy node; set it below "
                    + fmt(t.watchdogTimeout().dividedBy(3))));
        }
        if (t.armingDelay().compareTo(t.quorumWindow()) < 0) {
            out.add(new Violation(timings + (o.armingDelay() != null ? "armingDelay" : "quorumWindow"),
                    "armingDelay " + fmt(t.armingDelay()) + " must be at least quorumWindow " + fmt(t.quorumWindow())
                            + " so a node that boots into a minority never arms; raise armingDelay"));
        }
    }

    private static void positive(Duration value, String name, String timings, List<Violation> out) {
        if (value != null && (value.isNegative() || value.isZero() || value.compareTo(MAX_TIMING) > 0)) {
            out.add(new Violation(timings + name, name + " " + (value.isNegative() ? value.toString() : fmt(value))
                    + " must be greater than 0s and at most 1h; remove the override to use the profile's value"));
        }
    }

    private static void count(Integer value, String name, String timings, List<Violation> out) {
        if (value != null && (value < 1 || value > MAX_COUNT)) {
            out.add(new Violation(timings + name, name + " " + value + " must be between 1 and " + MAX_COUNT
                    + "; remove the override to use the profile's value"));
        }
    }

    private static void requireExpected(int expectedMembers) {
        if (expectedMembers < 0) {
            throw new IllegalArgumentException("expected members must be >= 0, got " + expectedMembers);
        }
    }

    private static String fmt(Duration d) {
        return DurationFormat.format(d);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private static <T> T or(T value, T fallback) {
        return value != null ? value : fallback;
    }
}
