package dev.fencing.nodemanager.status;

import dev.fencing.api.v1.FencedNode;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.api.v1.ResolvedTimingsStatus;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.report.ReceivedReport;
import dev.fencing.nodemanager.stream.ServedMemberSets;
import dev.fencing.policy.DurationFormat;
import dev.fencing.policy.MemberSetDigest;
import dev.fencing.policy.Mode;
import dev.fencing.policy.PolicyProtos;
import dev.fencing.policy.QuorumLossAction;
import dev.fencing.policy.Violation;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.nodemanager.v1.AgentReport;
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
     * @param nodeFacts   what Kubernetes says of every node labelled into the group (Ready, kubelet Lease)
     * @param now         controller wall clock
     * @param staleAfter  a report older than this no longer counts as the agent being heard
     * @param served      the member sets this replica served the group's agents (what a silent node may still count
     *                    its quorum over)
     */
    public static StatusOutcome calculate(GroupModel model, NodeGroupStatus previous,
                                          Function<String, Optional<ReceivedReport>> reports,
                                          Map<String, Map<String, String>> nodeLabels,
                                          Map<String, NodeFacts> nodeFacts, Instant now, Duration staleAfter,
                                          ServedMemberSets served) {
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
            return new StatusOutcome(status, labelChanges, events, Set.of(), Map.of());
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

        // Labels and arming events: fencing-enabled follows the latest report's armed flag, and goes on a clean stop
        // (final report). A silent agent keeps its label: silence may be a node that is fencing itself; a label left
        // by a clean stop would make a healthy node look fenced.
        for (Map.Entry<String, Map<String, String>> e : nodeLabels.entrySet()) {
            String node = e.getKey();
            ReceivedReport r = latest.get(node);
            if (r == null) {
                continue;
            }
            Map<String, String> change = new LinkedHashMap<>();
            boolean armedNow = armedAtReport(r.report());
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
                events.add(new GroupEvent(true, node, "Normal", "Disarmed", (cleanStop(r.report())
                        ? "fencing agent stopped cleanly (final report)" : "fencing agent disarmed the watchdog")
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
            String readyMessage = message + (message.endsWith(".") ? "" : ".")
                    + " Agents keep running on the last valid policy, if any.";
            // Also an Event: where the NodeGroup keeps no status of ours (Deckhouse's CRD) it is the only place
            // besides the log that says the spec is refused. Once per new message.
            boolean announced = previousConditions.stream().anyMatch(c -> READY.equals(c.getType())
                    && "InvalidSpec".equals(c.getReason()) && readyMessage.equals(c.getMessage()));
            if (!announced) {
                events.add(new GroupEvent(false, model.group(), "Warning", "InvalidSpec", readyMessage));
            }
            conditions.add(condition(previousConditions, READY, "False", "InvalidSpec", readyMessage,
                    model.generation(), now));
            conditions.add(condition(previousConditions, QUORUM_HEALTHY, "Unknown", "InvalidSpec",
                    "quorum cannot be judged while spec.fencing is invalid", model.generation(), now));
            status.withConditions(conditions);
            return new StatusOutcome(status, labelChanges, events, fresh.keySet(), Map.of());
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

        Map<String, String> heldBack = new TreeMap<>();
        List<FencedNode> fenced = fencedNodes(model, previous, latest, fresh, holding, nodeLabels, nodeFacts, now,
                staleAfter, served, events, heldBack);
        status.withFencedNodes(fenced.isEmpty() ? null : fenced);
        return new StatusOutcome(status, labelChanges, events, fresh.keySet(), heldBack);
    }

    /**
     * True when the group's policy makes a node that loses quorum reset itself: mode Watchdog with quorumLossAction
     * Fence. Only then can silence mean "fenced"; Exclude and Wait nodes keep running by design (ARCHITECTURE §7).
     */
    public static boolean fencesNodes(GroupModel model) {
        return model.policy() != null && model.policy().mode() == Mode.WATCHDOG
                && model.policy().quorumLossAction() == QuorumLossAction.FENCE;
    }

    /**
     * The agent's own last word on its watchdog: armed, and not a clean stop. A final report that says fencing is
     * in progress (SIGTERM while already starving) leaves the node fencing, so it still counts as armed.
     */
    static boolean armedAtReport(AgentReport report) {
        return report.getArmed() && !cleanStop(report);
    }

    /**
     * How much longer than the policy's watchdog timeout X's device runs, as its last report says (zero without such
     * a report). A node cut off before a shorter timeout reached it keeps the longer one: it is fenced only once that
     * has run out.
     */
    static Duration longerWatchdog(GroupModel model, ReceivedReport last) {
        if (last == null || !last.report().hasWatchdogTimeout()) {
            return Duration.ZERO;
        }
        Duration running = PolicyProtos.fromProto(last.report().getWatchdogTimeout());
        Duration longer = running.minus(model.policy().timings().watchdogTimeout());
        return longer.isNegative() ? Duration.ZERO : longer;
    }

    /**
     * The agent closed its stream on purpose after disarming (final report, not starving, not armed). A final report
     * that still says armed comes from a stop whose disarm did not happen (the quorum thread stuck past the shutdown
     * wait): the device was left running, so the node is not stopped cleanly.
     */
    public static boolean cleanStop(AgentReport report) {
        return report.getFinalReport() && !report.getFencingInProgress() && !report.getArmed();
    }

    /**
     * Safe-to-assume-fenced (ARCHITECTURE §7). X is recorded only when all hold:
     * <ul>
     * <li>the group is Watchdog + Fence ({@link #fencesNodes});</li>
     * <li>X was armed: its latest report (any age) says armed and is not a clean stop; only when this replica holds
     *     no report of X at all (e.g. after a controller restart) does the fencing-enabled label stand in, which is
     *     safe because a clean stop removes it and the Kubernetes checks below still apply;</li>
     * <li>its own reports stopped, at least a quorum of fresh reports hold quorum and none of them confirms X, and
     *     the clock has passed lastContact(X) + safeToAssumeFencedDelay, where lastContact(X) is the latest instant
     *     any of them heard X (receive time − since_last_heard) or X's own last report;</li>
     * <li>Kubernetes agrees: X's Node is not Ready and its kubelet has not renewed its Lease within that delay.</li>
     * <li>X cannot be holding quorum under the config it may still run ({@link #mayStillHoldQuorum}): its latest report
     *     says Fence (a node last on Exclude or Wait keeps running), the delay is the longer of the current one and
     *     the one X reported, and the members that report not hearing X are more than half of the set X reported and
     *     of every set served since.</li>
     * </ul>
     * Without a majority view nothing is added; entries already recorded stay while Kubernetes still agrees.
     */
    private static List<FencedNode> fencedNodes(GroupModel model, NodeGroupStatus previous,
                                                Map<String, ReceivedReport> latest,
                                                Map<String, ReceivedReport> fresh, Set<String> holding,
                                                Map<String, Map<String, String>> nodeLabels,
                                                Map<String, NodeFacts> nodeFacts, Instant now, Duration staleAfter,
                                                ServedMemberSets served, List<GroupEvent> events,
                                                Map<String, String> heldBack) {
        if (!fencesNodes(model)) {
            return List.of();
        }
        Duration delay = model.policy().timings().safeToAssumeFencedDelay();
        Map<String, FencedNode> before = new HashMap<>();
        if (previous != null && previous.getFencedNodes() != null) {
            previous.getFencedNodes().forEach(f -> before.put(f.getName(), f));
        }
        List<FencedNode> out = new ArrayList<>();
        if (holding.size() < model.policy().quorumSize()) {
            // No majority view: keep what was already recorded while Kubernetes agrees, add nothing.
            before.values().stream().filter(f -> !fresh.containsKey(f.getName()))
                    .filter(f -> nodeFacts.containsKey(f.getName())
                            && nodeFacts.get(f.getName()).goneFor(now, delay))
                    .forEach(out::add);
            return out;
        }
        for (String x : model.expected().keySet()) {
            NodeFacts facts = nodeFacts.get(x);
            if (fresh.containsKey(x) || facts == null) {
                continue;
            }
            ReceivedReport last = latest.get(x);
            boolean wasArmed = last != null ? armedAtReport(last.report())
                    : nodeLabels.getOrDefault(x, Map.of()).containsKey(NodeLabels.FENCING_ENABLED);
            if (!wasArmed) {
                continue;
            }
            Instant lastContact = last == null ? null : last.receivedAt();
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
            Duration delayOfX = longer(delay.plus(longerWatchdog(model, last)), reportedDelay(last));
            if (confirmedBySomeone || lastContact == null || !facts.goneFor(now, delayOfX)) {
                continue;
            }
            // Once recorded, a set served later (a node joining) cannot have reached X any more: it stays.
            Optional<String> mayHold = before.containsKey(x) ? Optional.empty()
                    : mayStillHoldQuorum(x, last, model, holding, served, staleAfter);
            if (mayHold.isPresent()) {
                heldBack.put(x, mayHold.get());
                continue;
            }
            Instant goneSince = facts.leaseRenewedAt() != null && facts.leaseRenewedAt().isAfter(lastContact)
                    ? facts.leaseRenewedAt() : lastContact;
            Instant fencedAt = goneSince.plus(delayOfX);
            if (now.isBefore(fencedAt)) {
                continue;
            }
            FencedNode entry = before.get(x);
            if (entry == null) {
                entry = new FencedNode().withName(x).withFencedAt(fencedAt.toString())
                        .withReason("armed at its last report, unheard by the majority since " + lastContact
                                + "; Node not Ready, kubelet Lease "
                                + (facts.leaseRenewedAt() == null ? "never seen renewed"
                                        : "last renewed " + facts.leaseRenewedAt())
                                + "; safe-to-assume-fenced delay " + DurationFormat.format(delay) + " elapsed");
                events.add(new GroupEvent(true, x, "Warning", "NodeFenced", "node " + x
                        + " is treated as fenced (powered off) from " + fencedAt + ": " + entry.getReason()));
            }
            out.add(entry);
        }
        return out;
    }

    /**
     * Why X, silent, may still be holding quorum (and so running) under a config other than the current one, or empty
     * when it cannot be: a node cut off before a change of the group reached it goes on under the config it had (its
     * latest report says which: {@code quorum_loss_action}, {@code expected_digest}), or under one served after that
     * report. For each
     * such member set E that contains X, X holds quorum only with more than half of E, or with exactly half and a
     * tie-breaker; the members of E that report not hearing X ({@code notHearing}: every fresh member holding
     * quorum, none of which confirms X) leave it {@code |E| - |notHearing ∩ E|} at most, itself included, so X is
     * ruled out only when that is less than half of E. A set X reported that this replica did not serve (served by
     * another replica, or before this one started) is unknown: X may be holding quorum. Without a report of X (this
     * replica started after X fell silent) the current set is all there is to go on.
     */
    static Optional<String> mayStillHoldQuorum(String x, ReceivedReport last, GroupModel model,
                                               Set<String> notHearing, ServedMemberSets served, Duration staleAfter) {
        if (last == null) {
            return Optional.empty();
        }
        AgentReport report = last.report();
        var action = report.getQuorumLossAction();
        if (action != dev.fencing.proto.fencing.v1.QuorumLossAction.QUORUM_LOSS_ACTION_UNSPECIFIED
                && action != dev.fencing.proto.fencing.v1.QuorumLossAction.QUORUM_LOSS_ACTION_FENCE) {
            return Optional.of("its last report says quorumLossAction " + action.name()
                    .replace("QUORUM_LOSS_ACTION_", "") + ": it did not learn the group fences and keeps running");
        }
        List<Set<String>> sets = new ArrayList<>();
        String digest = report.getExpectedDigest();
        Set<String> current = model.expected().keySet();
        if (!digest.isEmpty() && !digest.equals(MemberSetDigest.of(current))) {
            Optional<Set<String>> reported = served.byDigest(digest);
            if (reported.isEmpty()) {
                return Optional.of("its last report counts quorum over a member set this replica never served"
                        + " (expected_digest " + digest + "): it may hold quorum there");
            }
            sets.add(reported.get());
        }
        // A config served after X's report left it may have reached X before its stream ended; staleAfter covers a
        // report that was on its way while a set was replaced.
        sets.addAll(served.servedSince(last.receivedAt().minus(staleAfter)));
        for (Set<String> set : sets) {
            if (!set.contains(x)) {
                continue;
            }
            Set<String> notHearingInSet = new TreeSet<>(notHearing);
            notHearingInSet.retainAll(set);
            long mayHear = set.size() - notHearingInSet.size();
            if (2 * mayHear >= set.size()) {
                return Optional.of("it may hold quorum over the member set " + abbreviate(new TreeSet<>(set))
                        + " it may still run: only " + notHearingInSet.size() + " of its " + set.size()
                        + " report not hearing it");
            }
        }
        return Optional.empty();
    }

    // The safe-to-assume-fenced delay X's latest report gives for the config X runs (zero without one).
    private static Duration reportedDelay(ReceivedReport last) {
        if (last == null || !last.report().hasSafeToAssumeFencedDelay()) {
            return Duration.ZERO;
        }
        return PolicyProtos.fromProto(last.report().getSafeToAssumeFencedDelay());
    }

    private static Duration longer(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
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

    /**
     * {@code status} with the condition {@code type} set (replacing one of that type); it keeps the lastTransitionTime
     * it has in {@code previous} while its status stays the same.
     */
    public static NodeGroupStatus withCondition(NodeGroupStatus status, NodeGroupStatus previous, String type,
                                                String conditionStatus, String reason, String message,
                                                long generation, Instant now) {
        List<Condition> before = previous == null || previous.getConditions() == null ? List.of()
                : previous.getConditions();
        List<Condition> conditions = new ArrayList<>(status.getConditions() == null ? List.of()
                : status.getConditions());
        conditions.removeIf(c -> type.equals(c.getType()));
        conditions.add(condition(before, type, conditionStatus, reason, message, generation, now));
        return status.withConditions(conditions);
    }

    /** A condition that keeps its previous lastTransitionTime while its type and status stay the same. */
    public static Condition condition(List<Condition> previous, String type, String status, String reason,
                                       String message, long generation, Instant now) {
        String since = previous.stream()
                .filter(c -> type.equals(c.getType()) && status.equals(c.getStatus()))
                .map(Condition::getLastTransitionTime).filter(Objects::nonNull).findFirst()
                .orElse(now.truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString());
        return new ConditionBuilder().withType(type).withStatus(status).withReason(reason).withMessage(message)
                .withObservedGeneration(generation).withLastTransitionTime(since).build();
    }
}
