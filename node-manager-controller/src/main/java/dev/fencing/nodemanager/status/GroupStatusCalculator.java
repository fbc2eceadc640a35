package dev.fencing.nodemanager.status;

import dev.fencing.api.v1.FencedNode;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.api.v1.ResolvedTimingsStatus;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.report.ReceivedReport;
import dev.fencing.policy.DurationFormat;
import dev.fencing.policy.Violation;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Pure status logic of a NodeGroup (nodegroup-status-controller): counts, conditions with reasons that say what is
 * wrong, the Deckhouse node labels from agent reports, Events on transitions, and safe-to-assume-fenced bookkeeping
 * (ARCHITECTURE §5/§7). Everything comes from the arguments; the reconciler only writes the outcome.
 */
public final class GroupStatusCalculator {

    /** Condition type: the group's fencing is configured and its agents report. */
    public static final String READY = "Ready";
    /** Condition type: a majority of expected members report quorum held. */
    public static final String QUORUM_HEALTHY = "QuorumHealthy";

    private GroupStatusCalculator() {
    }

    /**
     * @param model       the group model
     * @param previous    the current status (for transitions), may be null
     * @param reports     latest report per node
     * @param nodeLabels  current labels of every node labelled into the group
     * @param now         controller wall clock
     * @param staleAfter  a report older than this no longer counts as the agent being heard
     */
    public static StatusOutcome calculate(GroupModel model, NodeGroupStatus previous,
                                          Function<String, Optional<ReceivedReport>> reports,
                                          Map<String, Map<String, String>> nodeLabels, Instant now,
                                          Duration staleAfter) {
        List<GroupEvent> events = new ArrayList<>();
        Map<String, Map<String, String>> labelChanges = new TreeMap<>();
        NodeGroupStatus status = new NodeGroupStatus().withObservedGeneration(model.generation());
        List<Condition> previousConditions = previous == null || previous.getConditions() == null
                ? List.of() : previous.getConditions();

        if (!model.fencingEnabled()) {
            nodeLabels.forEach((node, labels) -> {
                Map<String, String> change = new LinkedHashMap<>();
                if (labels.containsKey(NodeLabels.FENCING_ENABLED)) {
                    change.put(NodeLabels.FENCING_ENABLED, null);
                }
                if (labels.containsKey(NodeLabels.FENCING_MODE)) {
                    change.put(NodeLabels.FENCING_MODE, null);
                }
                if (!change.isEmpty()) {
                    labelChanges.put(node, change);
                }
            });
            status.withConditions(List.of(condition(previousConditions, READY, "True", "FencingDisabled",
                    "spec.fencing is absent: no agents run in this group", model.generation(), now)));
            return new StatusOutcome(status, labelChanges, events, Set.of());
        }

        // Reports: latest per labelled node, and which are fresh.
        Map<String, ReceivedReport> latest = new TreeMap<>();
        for (String node : nodeLabels.keySet()) {
            reports.apply(node).filter(r -> r.group().equals(model.group())).ifPresent(r -> latest.put(node, r));
        }
        Set<String> expected = model.expected().keySet();
        Map<String, ReceivedReport> fresh = new TreeMap<>();
        latest.forEach((n, r) -> {
            if (expected.contains(n) && !r.receivedAt().isBefore(now.minus(staleAfter))) {
                fresh.put(n, r);
            }
        });

        // Labels and arming events: fencing-enabled follows the latest report's armed flag. A silent agent keeps
        // its label: silence may be a node that is fencing itself, and the label is what marks it as such.
        for (Map.Entry<String, Map<String, String>> e : nodeLabels.entrySet()) {
            String node = e.getKey();
            ReceivedReport r = latest.get(node);
            if (r == null) {
                continue;
            }
            Map<String, String> change = new LinkedHashMap<>();
            boolean armedNow = r.report().getArmed();
            boolean labelled = e.getValue().containsKey(NodeLabels.FENCING_ENABLED);
            if (armedNow && !labelled) {
                change.put(NodeLabels.FENCING_ENABLED, "");
                events.add(new GroupEvent(true, node, "Normal", "Armed", "fencing agent armed the watchdog "
                        + "(group " + model.group() + ")"));
            } else if (!armedNow && labelled) {
                change.put(NodeLabels.FENCING_ENABLED, null);
                String why = r.report().getDisarmReasonsList().stream()
                        .map(d -> d.getKind().name().replace("KIND_", "").toLowerCase()
                                + (d.getDetail().isEmpty() ? "" : ": " + d.getDetail()))
                        .collect(Collectors.joining(", "));
                events.add(new GroupEvent(true, node, "Normal", "Disarmed", "fencing agent disarmed the watchdog"
                        + (why.isEmpty() ? "" : " (" + why + ")")));
            }
            String mode = modeLabel(r.report().getMode());
            if (mode != null && !mode.equals(e.getValue().get(NodeLabels.FENCING_MODE))) {
                change.put(NodeLabels.FENCING_MODE, mode);
            }
            if (!change.isEmpty()) {
                labelChanges.put(node, change);
            }
        }

        int armed = (int) fresh.values().stream().filter(r -> r.report().getArmed()).count();
        int heard = fresh.values().stream().filter(r -> r.report().getQuorumHeld())
                .mapToInt(r -> (int) r.report().getConfirmed()).max().orElse(0);
        status.withExpected(expected.size()).withArmed(armed).withHeard(heard);
        List<Condition> conditions = new ArrayList<>();

        if (!model.valid()) {
            String message = model.violations().stream().map(Violation::toString).collect(Collectors.joining("; "));
            conditions.add(condition(previousConditions, READY, "False", "InvalidSpec", message
                    + (message.endsWith(".") ? "" : ".") + " Agents keep running on the last valid policy, if any.",
                    model.generation(), now));
            conditions.add(condition(previousConditions, QUORUM_HEALTHY, "Unknown", "InvalidSpec",
                    "quorum cannot be judged while spec.fencing is invalid", model.generation(), now));
            status.withConditions(conditions);
            return new StatusOutcome(status, labelChanges, events, fresh.keySet());
        }

        int quorum = model.policy().quorumSize();
        status.withMode(model.policy().mode().crdValue()).withQuorumSize(quorum)
                .withTimings(ResolvedTimingsStatus.from(model.policy().timings()));

        Set<String> silent = new TreeSet<>(expected);
        silent.removeAll(fresh.keySet());
        if (expected.isEmpty()) {
            conditions.add(condition(previousConditions, READY, "False", "NoMembers", "no node carries the label "
                    + NodeLabels.GROUP + "=" + model.group() + " (or all are being removed)", model.generation(),
                    now));
        } else if (!silent.isEmpty()) {
            conditions.add(condition(previousConditions, READY, "False", "AgentsNotReporting", silent.size() + " of "
                    + expected.size() + " agents have not reported in the last " + DurationFormat.format(staleAfter)
                    + ": " + abbreviate(silent) + "; check the pods of DaemonSet fencing-agent-" + model.group(),
                    model.generation(), now));
        } else {
            conditions.add(condition(previousConditions, READY, "True", "AgentsReporting", "all " + expected.size()
                    + " agents report; " + armed + " armed", model.generation(), now));
        }

        Set<String> holding = fresh.entrySet().stream().filter(e -> e.getValue().report().getQuorumHeld())
                .map(Map.Entry::getKey).collect(Collectors.toCollection(TreeSet::new));
        Set<String> notHolding = new TreeSet<>(fresh.keySet());
        notHolding.removeAll(holding);
        Condition quorumCondition;
        if (fresh.isEmpty()) {
            quorumCondition = condition(previousConditions, QUORUM_HEALTHY, "Unknown", "NoReports",
                    "no agent of the " + expected.size() + " expected has reported yet", model.generation(), now);
        } else if (holding.size() >= quorum) {
            quorumCondition = condition(previousConditions, QUORUM_HEALTHY, "True", "QuorumHeld", holding.size()
                    + " of " + expected.size() + " members report quorum held (quorum " + quorum + ")"
                    + (notHolding.isEmpty() ? "" : "; without quorum: " + abbreviate(notHolding))
                    + (silent.isEmpty() ? "" : "; silent: " + abbreviate(silent)), model.generation(), now);
        } else if (notHolding.isEmpty() && fresh.size() < quorum) {
            // Agents are still coming up: everyone who reported holds quorum, too few have reported to judge.
            quorumCondition = condition(previousConditions, QUORUM_HEALTHY, "Unknown", "AwaitingReports",
                    fresh.size() + " of " + expected.size() + " agents reported so far, all holding quorum; " + quorum
                    + " needed to judge; silent: " + abbreviate(silent), model.generation(), now);
        } else {
            quorumCondition = condition(previousConditions, QUORUM_HEALTHY, "False", "QuorumLost", "only "
                    + holding.size() + " of " + expected.size() + " members report quorum held, " + quorum
                    + " needed; without quorum: " + abbreviate(notHolding) + "; silent: " + abbreviate(silent),
                    model.generation(), now);
        }
        conditions.add(quorumCondition);
        String before = previousConditions.stream().filter(c -> QUORUM_HEALTHY.equals(c.getType()))
                .map(Condition::getStatus).findFirst().orElse("Unknown");
        if ("True".equals(before) && "False".equals(quorumCondition.getStatus())) {
            events.add(new GroupEvent(false, model.group(), "Warning", "QuorumLost", quorumCondition.getMessage()));
        } else if ("False".equals(before) && "True".equals(quorumCondition.getStatus())) {
            events.add(new GroupEvent(false, model.group(), "Normal", "QuorumRecovered",
                    quorumCondition.getMessage()));
        }
        status.withConditions(conditions);

        List<FencedNode> fenced = fencedNodes(model, previous, latest, fresh, holding, nodeLabels, now, events);
        status.withFencedNodes(fenced.isEmpty() ? null : fenced);
        return new StatusOutcome(status, labelChanges, events, fresh.keySet());
    }

    /**
     * Safe-to-assume-fenced: X was armed (its label says so), its own reports stopped, and the agents holding quorum
     * (at least a quorum of them) no longer confirm it. lastContact(X) = the latest instant any of them heard X
     * (receive time − since_last_heard), or X's own last report; X counts as fenced from lastContact +
     * safeToAssumeFencedDelay.
     */
    private static List<FencedNode> fencedNodes(GroupModel model, NodeGroupStatus previous,
                                                Map<String, ReceivedReport> latest,
                                                Map<String, ReceivedReport> fresh, Set<String> holding,
                                                Map<String, Map<String, String>> nodeLabels, Instant now,
                                                List<GroupEvent> events) {
        Map<String, FencedNode> before = new HashMap<>();
        if (previous != null && previous.getFencedNodes() != null) {
            previous.getFencedNodes().forEach(f -> before.put(f.getName(), f));
        }
        List<FencedNode> out = new ArrayList<>();
        if (holding.size() < model.policy().quorumSize()) {
            // No majority view: keep what was already recorded, add nothing.
            before.values().stream().filter(f -> !fresh.containsKey(f.getName())).forEach(out::add);
            return out;
        }
        Duration delay = model.policy().timings().safeToAssumeFencedDelay();
        for (String x : model.expected().keySet()) {
            if (fresh.containsKey(x)) {
                continue;
            }
            boolean wasArmed = nodeLabels.getOrDefault(x, Map.of()).containsKey(NodeLabels.FENCING_ENABLED)
                    || Optional.ofNullable(latest.get(x)).map(r -> r.report().getArmed()).orElse(false);
            if (!wasArmed) {
                continue;
            }
            Instant lastContact = Optional.ofNullable(latest.get(x)).map(ReceivedReport::receivedAt).orElse(null);
            boolean confirmedBySomeone = false;
            for (String member : holding) {
                for (PeerReport peer : fresh.get(member).report().getPeersList()) {
                    if (!peer.getName().equals(x)) {
                        continue;
                    }
                    confirmedBySomeone |= peer.getConfirmed();
                    if (peer.hasSinceLastHeard()) {
                        Instant heardAt = fresh.get(member).receivedAt().minus(Duration.ofSeconds(
                                peer.getSinceLastHeard().getSeconds(), peer.getSinceLastHeard().getNanos()));
                        if (lastContact == null || heardAt.isAfter(lastContact)) {
                            lastContact = heardAt;
                        }
                    }
                }
            }
            if (confirmedBySomeone || lastContact == null) {
                continue;
            }
            Instant fencedAt = lastContact.plus(delay);
            if (now.isBefore(fencedAt)) {
                continue;
            }
            FencedNode entry = before.get(x);
            if (entry == null) {
                entry = new FencedNode().withName(x).withFencedAt(fencedAt.toString())
                        .withReason("armed, unheard by the majority since " + lastContact
                                + "; safe-to-assume-fenced delay " + DurationFormat.format(delay) + " elapsed");
                events.add(new GroupEvent(true, x, "Warning", "NodeFenced", "node " + x
                        + " is treated as fenced (powered off) from " + fencedAt + ": " + entry.getReason()));
            }
            out.add(entry);
        }
        return out;
    }

    private static String modeLabel(FencingMode mode) {
        return switch (mode) {
            case FENCING_MODE_WATCHDOG -> "Watchdog";
            case FENCING_MODE_NOTIFY -> "Notify";
            default -> null;
        };
    }

    private static String abbreviate(Set<String> names) {
        if (names.isEmpty()) {
            return "none";
        }
        List<String> list = new ArrayList<>(names);
        return list.size() <= 10 ? String.join(", ", list)
                : String.join(", ", list.subList(0, 10)) + " and " + (list.size() - 10) + " more";
    }

    private static Condition condition(List<Condition> previous, String type, String status, String reason,
                                       String message, long generation, Instant now) {
        String since = previous.stream()
                .filter(c -> type.equals(c.getType()) && status.equals(c.getStatus()))
                .map(Condition::getLastTransitionTime).filter(Objects::nonNull).findFirst()
                .orElse(now.truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString());
        return new ConditionBuilder().withType(type).withStatus(status).withReason(reason).withMessage(message)
                .withObservedGeneration(generation).withLastTransitionTime(since).build();
    }
}
