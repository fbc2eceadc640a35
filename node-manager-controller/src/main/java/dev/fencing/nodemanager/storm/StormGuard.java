package dev.fencing.nodemanager.storm;

import dev.fencing.policy.DurationFormat;
import dev.fencing.policy.MinHealthy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Storm limits (ARCHITECTURE §7): asked before any fencing action (out-of-service taint, Node deletion, power
 * stage), it admits a fencing only while the group and the cluster keep enough healthy nodes, fewer fencings than
 * the maximum are in progress, and no cooldown runs. A switch that takes out half a group then fences nobody.
 *
 * <p>Order of the checks (the first that holds is the answer): the group's {@code minHealthy}, the cluster's
 * {@code --storm-min-healthy}, the cooldown after either held, the group's {@code maxConcurrent}, the cluster's
 * {@code --storm-max-concurrent}.
 *
 * <p>What it counts comes from the cluster through {@link StormCensus} at every call (Nodes Ready, the taints and
 * deletions in progress), so a new leader counts what the previous one started. Its own memory only covers what the
 * caches do not show yet: fencings it admitted (until {@link #finished}, or until the node is healthy again or
 * gone) and when a minHealthy limit last held (for the cooldown; a new leader that finds the NodeGroup's
 * {@code FencingStormLimit} condition saying a storm held starts a full cooldown when it first looks).
 */
public final class StormGuard {

    private static final Logger LOG = LoggerFactory.getLogger(StormGuard.class);

    /**
     * The answer to one request.
     *
     * @param allowed true: go ahead (and call {@link #finished} when the fencing is over); false: do nothing now
     * @param reason  why, in words for a condition message or Event
     */
    public record Admission(boolean allowed, String reason) {

        /** Checks the reason is present. */
        public Admission {
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * An admission with the limit that held.
     *
     * @param limit   the limit that held, null when allowed
     * @param message why, in words
     */
    public record Decision(StormLimit limit, String message) {

        /** True when no limit held. */
        public boolean allowed() {
            return limit == null;
        }

        /** As the public contract's {@link Admission}. */
        public Admission admission() {
            return new Admission(allowed(), message);
        }
    }

    private final ClusterStormLimits clusterLimits;
    private final StormCensus census;
    private final Map<String, Set<String>> admitted = new HashMap<>();
    private final Map<String, Instant> stormHeldAt = new HashMap<>();
    private final Set<String> seeded = new HashSet<>();
    private Instant clusterStormHeldAt;

    /**
     * @param clusterLimits the cluster-wide limits
     * @param census        reads every fencing group from the cluster at each call
     */
    public StormGuard(ClusterStormLimits clusterLimits, StormCensus census) {
        this.clusterLimits = Objects.requireNonNull(clusterLimits, "clusterLimits");
        this.census = Objects.requireNonNull(census, "census");
    }

    /** May {@code node} of {@code group} be fenced now? When allowed, the fencing counts as in progress. */
    public Admission admit(String group, String node, Instant now) {
        return decide(group, node, now).admission();
    }

    /** {@link #admit}, with the limit that held (for the condition reason). */
    public synchronized Decision decide(String group, String node, Instant now) {
        Map<String, GroupCensus> groups = census.groups();
        prune(groups);
        GroupCensus g = groups.get(group);
        if (g == null) {
            return refuse(StormLimit.UNKNOWN_GROUP, group, node, "not fencing " + node + ": group " + group
                    + " is not among the groups with fencing on as the controller's caches show them");
        }
        if (!g.specValid()) {
            return refuse(StormLimit.UNKNOWN_GROUP, group, node, "not fencing " + node + ": the spec of group "
                    + group + " is invalid (see its conditions)");
        }
        seed(g, now);
        Set<String> inProgress = inProgress(g);
        if (inProgress.contains(node)) {
            return new Decision(null, "fencing of " + node + " is already in progress");
        }
        Decision health = health(groups, g, node, now);
        if (!health.allowed()) {
            return health;
        }
        int healthy = healthy(g).size();
        MinHealthy min = g.limits().effectiveMinHealthy();
        int max = g.limits().effectiveMaxConcurrent();
        if (inProgress.size() >= max) {
            return refuse(StormLimit.MAX_CONCURRENT, group, node, "not fencing " + node + " yet: group " + group
                    + " has " + inProgress.size() + " fencing(s) in progress (" + names(inProgress) + "), "
                    + "spec.fencing.storm.maxConcurrent " + max);
        }
        List<String> everywhere = new ArrayList<>();
        groups.values().forEach(each -> inProgress(each).forEach(n -> everywhere.add(each.group() + "/" + n)));
        if (everywhere.size() >= clusterLimits.maxConcurrent()) {
            return refuse(StormLimit.CLUSTER_MAX_CONCURRENT, group, node, "not fencing " + node + " yet: "
                    + everywhere.size() + " fencing(s) in progress over all groups (" + names(everywhere) + "), "
                    + "--storm-max-concurrent " + clusterLimits.maxConcurrent());
        }
        admitted.computeIfAbsent(group, k -> new HashSet<>()).add(node);
        LOG.info("event=storm_admitted group={} node={} healthy={} members={} in_progress={}", group, node, healthy,
                g.members().size(), inProgress.size() + 1);
        return new Decision(null, "admitted: " + healthy + " of " + g.members().size() + " nodes of group " + group
                + " healthy (minHealthy " + min + "), " + (inProgress.size() + 1) + " of " + max
                + " concurrent fencing(s)");
    }

    /**
     * Would any fencing in {@code group} be held back now by a limit that does not depend on the node (the group's
     * or the cluster's minHealthy, the cooldown)? Asked every reconcile, so the condition and the cooldown follow a
     * storm even while no node is a candidate yet. Empty when the group is not a fencing group or its spec is invalid.
     */
    public synchronized Optional<Decision> assess(String group, Instant now) {
        Map<String, GroupCensus> groups = census.groups();
        GroupCensus g = groups.get(group);
        if (g == null || !g.specValid() || g.members().isEmpty()) {
            return Optional.empty();
        }
        prune(groups);
        seed(g, now);
        return Optional.of(health(groups, g, "any node", now));
    }

    private void seed(GroupCensus g, Instant now) {
        if (g.stormRecorded() && seeded.add(g.group()) && !stormHeldAt.containsKey(g.group())) {
            // A new leader: the previous one recorded a storm; when it last held is not known, so count from now.
            stormHeldAt.put(g.group(), now);
        }
    }

    // The limits that do not depend on which node: group minHealthy, cluster minHealthy, cooldown.
    private Decision health(Map<String, GroupCensus> groups, GroupCensus g, String node, Instant now) {
        String group = g.group();
        int healthy = healthy(g).size();
        MinHealthy min = g.limits().effectiveMinHealthy();
        if (!min.exceededBy(healthy, g.members().size())) {
            stormHeldAt.put(group, now);
            Set<String> unhealthy = new TreeSet<>(g.members());
            unhealthy.removeAll(healthy(g));
            return refuse(StormLimit.MIN_HEALTHY, group, node, "not fencing " + node + ": only " + healthy + " of "
                    + g.members().size() + " nodes of group " + group + " are healthy, fencing needs more than "
                    + "spec.fencing.storm.minHealthy " + min + " (not healthy: " + names(unhealthy) + "); so many "
                    + "at once suggests a shared failure (switch, rack, power), not failed nodes");
        }
        int clusterHealthy = 0;
        int clusterMembers = 0;
        for (GroupCensus each : groups.values()) {
            clusterHealthy += healthy(each).size();
            clusterMembers += each.members().size();
        }
        if (!clusterLimits.minHealthy().exceededBy(clusterHealthy, clusterMembers)) {
            clusterStormHeldAt = now;
            return refuse(StormLimit.CLUSTER_MIN_HEALTHY, group, node, "not fencing " + node + ": only "
                    + clusterHealthy + " of " + clusterMembers + " nodes of all " + groups.size() + " fencing groups "
                    + "are healthy, fencing needs more than --storm-min-healthy " + clusterLimits.minHealthy());
        }
        Instant held = later(stormHeldAt.get(group), clusterStormHeldAt);
        if (held != null && now.isBefore(held.plus(g.limits().effectiveCooldown()))) {
            return refuse(StormLimit.COOLDOWN, group, node, "not fencing " + node + " before "
                    + held.plus(g.limits().effectiveCooldown()) + ": a minHealthy storm limit held at " + held
                    + ", spec.fencing.storm.cooldown " + DurationFormat.format(g.limits().effectiveCooldown()));
        }
        return new Decision(null, "within the storm limits: " + healthy + " of " + g.members().size()
                + " nodes of group " + group + " healthy (minHealthy " + min + ")");
    }

    /**
     * A fencing of {@code node} is in progress that this guard may not have admitted: an open {@code NodeFencing}
     * record, perhaps started by the previous leader whose admissions died with it. It counts towards
     * {@code maxConcurrent} and {@code --storm-max-concurrent} until {@link #finished}, exactly like one admitted
     * here, so a new leader does not start a power stage beside one still running.
     */
    public synchronized void adopt(String group, String node) {
        if (admitted.computeIfAbsent(group, k -> new HashSet<>()).add(node)) {
            LOG.info("event=storm_adopted group={} node={} reason=open_node_fencing_record", group, node);
        }
    }

    /** The fencing of {@code node} is over (node back, Node gone, power stages done): it no longer counts. */
    public synchronized void finished(String group, String node, Instant now) {
        Set<String> nodes = admitted.get(group);
        if (nodes != null && nodes.remove(node)) {
            LOG.info("event=storm_finished group={} node={} at={}", group, node, now);
        }
    }

    /** The fencings in progress in {@code group}: visible in the cluster or admitted here and not yet finished. */
    public synchronized Set<String> inProgress(String group) {
        GroupCensus g = census.groups().get(group);
        return g == null ? Set.copyOf(admitted.getOrDefault(group, Set.of())) : Set.copyOf(inProgress(g));
    }

    private Set<String> inProgress(GroupCensus g) {
        Set<String> out = new TreeSet<>(g.fencing());
        out.addAll(admitted.getOrDefault(g.group(), Set.of()));
        return out;
    }

    private Set<String> healthy(GroupCensus g) {
        Set<String> out = new TreeSet<>(g.healthy());
        out.removeAll(admitted.getOrDefault(g.group(), Set.of()));
        return out;
    }

    // Admitted nodes that are gone from the group, or healthy again without anything in progress, are over.
    private void prune(Map<String, GroupCensus> groups) {
        admitted.forEach((group, nodes) -> {
            GroupCensus g = groups.get(group);
            if (g != null) {
                nodes.removeIf(n -> !g.members().contains(n) || (g.healthy().contains(n) && !g.fencing().contains(n)));
            }
        });
        admitted.values().removeIf(Set::isEmpty);
    }

    private static Decision refuse(StormLimit limit, String group, String node, String message) {
        LOG.debug("event=storm_limited group={} node={} limit={} message=\"{}\"", group, node, limit.reason(),
                message);
        return new Decision(limit, message);
    }

    private static Instant later(Instant a, Instant b) {
        if (a == null) {
            return b;
        }
        return b == null || a.isAfter(b) ? a : b;
    }

    private static String names(java.util.Collection<String> names) {
        List<String> list = new ArrayList<>(names);
        if (list.isEmpty()) {
            return "none";
        }
        return list.size() <= 10 ? String.join(", ", list)
                : String.join(", ", list.subList(0, 10)) + " and " + (list.size() - 10) + " more";
    }
}
