package dev.fencing.nodemanager.escalation;

import dev.fencing.api.fencing.v1alpha1.Durations;
import dev.fencing.api.fencing.v1alpha1.NodeFencing;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfig;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfigSpec;
import dev.fencing.nodemanager.status.GroupStatusCalculator;
import dev.fencing.nodemanager.status.NodeFacts;
import dev.fencing.proto.fencing.v1.DisarmReason;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import io.fabric8.kubernetes.api.model.Node;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * When a node is escalated to power fencing, pure. A node of a Watchdog + Fence group with a matching
 * NodeFencingConfig is escalated
 * <ul>
 * <li>when it is recorded as fenced (the majority has not heard it and Kubernetes agrees, past
 *     safe-to-assume-fenced) and still is {@code escalationGrace} later: it should have fenced itself, and a node
 *     whose agent hangs while something still feeds its watchdog would not have; or</li>
 * <li>at once when its agent's last report said its watchdog was not open (condition other than {@code ok}: the
 *     device is missing or failing, or the agent had not armed yet) and it is silent with Kubernetes agreeing it
 *     is gone: it could not fence itself. Not when that report says the agent was disarmed on purpose (the
 *     disable file, maintenance, removal from the group, Notify mode, shutting down, or a clean stop's final
 *     report): a node disarmed for maintenance and then rebooted is gone for a while without being a
 *     failure.</li>
 * </ul>
 */
public final class EscalationTrigger {

    /** Watchdog condition of an agent whose watchdog works. */
    static final String WATCHDOG_OK = "ok";

    private EscalationTrigger() {
    }

    /**
     * One node of a fencing group as the caches see it.
     *
     * @param node              the Node
     * @param group             its NodeGroup
     * @param fencedAt          when it counts as fenced (the group's {@code status.fencedNodes}), or null
     * @param watchdogCondition its agent's last reported watchdog condition, or null without any report
     * @param disarmedOnPurpose its agent's last report says it was disarmed on purpose ({@link #onPurpose})
     * @param reporting         its agent reported within the staleness window
     * @param facts             Kubernetes' view of it
     */
    public record Candidate(Node node, String group, Instant fencedAt, String watchdogCondition,
                            boolean disarmedOnPurpose, boolean reporting, NodeFacts facts) {
    }

    /** Disarm reasons that mean someone chose to disarm the node, not that it could not arm. */
    private static final Set<DisarmReason.Kind> ON_PURPOSE = EnumSet.of(DisarmReason.Kind.KIND_DISABLE_FILE,
            DisarmReason.Kind.KIND_MAINTENANCE, DisarmReason.Kind.KIND_BEING_REMOVED, DisarmReason.Kind.KIND_NOTIFY_MODE,
            DisarmReason.Kind.KIND_SHUTTING_DOWN);

    /**
     * Whether an agent's report says it was disarmed on purpose: a disarm reason someone chose (the disable file,
     * maintenance, removal from the group, Notify mode, shutting down), or the final report of a clean stop.
     */
    public static boolean onPurpose(AgentReport report) {
        return GroupStatusCalculator.cleanStop(report)
                || report.getDisarmReasonsList().stream().anyMatch(r -> ON_PURPOSE.contains(r.getKind()));
    }

    /**
     * An escalation to start.
     *
     * @param node    node name
     * @param group   its NodeGroup
     * @param config  the NodeFencingConfig whose stages run
     * @param reason  why
     * @param episode when this fencing event of the node began, the same on every replica ({@link #episode})
     */
    public record Due(String node, String group, String config, String reason, Instant episode) {

        /** Longest node name kept whole in a record name: with {@code -} and 19 digits it stays within 253. */
        static final int MAX_NAME_BASE = 233;

        /**
         * The record's name: one per node and fencing event, {@code <node>-<episode, unix seconds>} (a node name too
         * long for that is shortened as for the node label). A replica that acts on a stale view of the same event
         * (it stalled, or has not seen the record yet) gets 409 Conflict on create instead of a second record.
         */
        public String recordName() {
            String base = node.length() <= MAX_NAME_BASE ? node : NodeFencing.nodeLabelValue(node);
            return base + "-" + episode.getEpochSecond();
        }
    }

    /**
     * Whether {@code c} is due now.
     *
     * @param configs    every NodeFencingConfig
     * @param goneWithin how long Kubernetes must have not heard the node (kubelet Lease) for the no-watchdog case
     */
    public static Optional<Due> due(Candidate c, List<NodeFencingConfig> configs, Duration goneWithin, Instant now) {
        Optional<NodeFencingConfig> config = configFor(c.node(), configs);
        if (config.isEmpty()) {
            return Optional.empty();
        }
        String name = c.node().getMetadata().getName();
        NodeFencingConfigSpec spec = config.get().getSpec();
        if (c.fencedAt() != null) {
            Duration grace;
            try {
                grace = Durations.parse("escalationGrace", spec.escalationGrace(),
                        Durations.parse("default", NodeFencingConfigSpec.DEFAULT_ESCALATION_GRACE, Duration.ZERO));
            } catch (IllegalArgumentException e) {
                return Optional.empty();
            }
            if (!now.isBefore(c.fencedAt().plus(grace)) && !c.reporting()) {
                return Optional.of(new Due(name, c.group(), config.get().getMetadata().getName(),
                        "still unheard " + format(grace) + " (escalationGrace) after safe-to-assume-fenced at "
                                + c.fencedAt(), c.fencedAt()));
            }
            return Optional.empty();
        }
        String condition = c.watchdogCondition();
        if (condition != null && !condition.isEmpty() && !WATCHDOG_OK.equals(condition) && !c.disarmedOnPurpose()
                && !c.reporting() && c.facts().goneFor(now, goneWithin)) {
            return Optional.of(new Due(name, c.group(), config.get().getMetadata().getName(),
                    "its agent last reported its watchdog not open (" + condition + ") and it is gone: Node not "
                            + "Ready, agent and kubelet silent", episode(c.node())));
        }
        return Optional.empty();
    }

    /**
     * When a node's current fencing event began, as every replica reads it from the API server: for a node its group
     * records fenced, its {@code fencedAt} (kept in the group's status across leaders); otherwise since when its Node
     * is not Ready (the Ready condition's lastTransitionTime), or, without one, the Node's creation.
     */
    static Instant episode(Node node) {
        String since = node.getStatus() == null || node.getStatus().getConditions() == null ? null
                : node.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType()))
                        .map(io.fabric8.kubernetes.api.model.NodeCondition::getLastTransitionTime)
                        .filter(t -> t != null && !t.isEmpty()).findFirst().orElse(null);
        for (String at : new String[] {since, node.getMetadata().getCreationTimestamp()}) {
            if (at != null) {
                try {
                    return Instant.parse(at);
                } catch (java.time.format.DateTimeParseException e) {
                    // written by the API server; a value that does not parse counts as absent
                }
            }
        }
        return Instant.EPOCH;
    }

    /**
     * The config for {@code node}: the first by name whose {@code nodeNames} lists it or whose {@code nodeSelector}
     * its labels match.
     */
    public static Optional<NodeFencingConfig> configFor(Node node, List<NodeFencingConfig> configs) {
        Map<String, String> labels = node.getMetadata().getLabels() == null ? Map.of()
                : node.getMetadata().getLabels();
        String name = node.getMetadata().getName();
        return configs.stream()
                .filter(c -> c.getSpec() != null && c.getSpec().stages() != null && !c.getSpec().stages().isEmpty())
                .filter(c -> (c.getSpec().nodeNames() != null && c.getSpec().nodeNames().contains(name))
                        || (c.getSpec().nodeSelector() != null && !c.getSpec().nodeSelector().isEmpty()
                                && c.getSpec().nodeSelector().entrySet().stream()
                                        .allMatch(e -> e.getValue().equals(labels.get(e.getKey())))))
                .min(Comparator.comparing(c -> c.getMetadata().getName()));
    }

    private static String format(Duration d) {
        return d.toSeconds() + "s";
    }
}
