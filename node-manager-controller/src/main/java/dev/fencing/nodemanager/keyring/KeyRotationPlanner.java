package dev.fencing.nodemanager.keyring;

import dev.fencing.nodemanager.report.ReceivedReport;
import dev.fencing.nodemanager.status.GroupEvent;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * secret-gossip-key-rotation (leader): pure decisions of a three-phase live gossip key rotation. Goal: every agent
 * that can still talk to the group moves from the old key to a new one without ever holding a keyring that cannot
 * read what its peers send. Trigger: the NodeGroup annotation {@value #ROTATE_ANNOTATION} holding a value the
 * keyring Secret has not recorded as completed. Output: the next keyring Secret state (keys, revision, phase), the
 * {@code GossipKeyRotation} condition and an Event per phase.
 *
 * <p>A phase is complete when every <em>reachable</em> expected agent reports the phase's keyring revision.
 * Reachable is conservative: the agent holds a stream to the controller (on a follower its stream is proxied to the
 * leader), or a fresh report of another member says it heard the agent recently. An agent cut off from the
 * controller but alive in gossip therefore blocks the rotation: removing the old key would cut it off from its
 * peers and fence it. An agent nobody hears does not block; it gets the current keyring in its full config when it
 * reconnects.
 */
public final class KeyRotationPlanner {

    /** NodeGroup annotation: set it to a new value to request one rotation. */
    public static final String ROTATE_ANNOTATION = "node-manager.deckhouse.io/rotate-gossip-key";
    /** NodeGroup condition type. */
    public static final String CONDITION = "GossipKeyRotation";
    /** Data key of the new key while it is a secondary (phase 1). */
    static final String NEXT_KEY = "secondary-rotation-next";
    /** Data key of the old key while it is a secondary (phase 2). */
    static final String PREVIOUS_KEY = "secondary-rotation-previous";
    private static final String PRIMARY = "primary";
    private static final int LISTED_NODES = 10;

    private KeyRotationPlanner() {
    }

    /**
     * The condition to show.
     *
     * @param status  "False" while a rotation runs, "True" once the last requested one completed
     * @param reason  {@code Phase1InstallSecondary}, {@code Phase2UseNewPrimary}, {@code Phase3RemoveOld},
     *                {@code Completed}
     * @param message what runs and who is awaited ({@code WaitingFor: node-a,node-b})
     */
    public record RotationCondition(String status, String reason, String message) {
    }

    /**
     * One decision.
     *
     * @param write     the keyring Secret state to write, empty when nothing changes
     * @param condition the condition, empty when no rotation was ever requested
     * @param event     the Event announcing the transition written, if any
     */
    public record Plan(Optional<KeyringState> write, Optional<RotationCondition> condition,
                       Optional<GroupEvent> event) {
    }

    /**
     * The expected agents that could still be cut off by a key change: connected to the controller, or heard by a
     * fresh report of another expected member within {@code window}.
     *
     * @param expected  the group's expected members
     * @param connected whether the agent of a node holds a stream to the controller
     * @param latest    the latest report per node
     * @param now       the controller's clock
     * @param window    how old a report, and a "last heard", may be and still count
     */
    public static SortedSet<String> reachable(Collection<String> expected, Predicate<String> connected,
                                              Function<String, Optional<ReceivedReport>> latest, Instant now,
                                              Duration window) {
        Instant cutoff = now.minus(window);
        SortedSet<String> out = new TreeSet<>();
        for (String node : expected) {
            if (connected.test(node)) {
                out.add(node);
            }
        }
        for (String reporter : expected) {
            Optional<ReceivedReport> r = latest.apply(reporter);
            if (r.isEmpty() || r.get().receivedAt().isBefore(cutoff)) {
                continue;
            }
            for (PeerReport peer : r.get().report().getPeersList()) {
                if (peer.getName().equals(reporter) || !peer.hasSinceLastHeard() || !expected.contains(peer.getName())) {
                    continue;
                }
                Duration since = Duration.ofSeconds(peer.getSinceLastHeard().getSeconds(),
                        peer.getSinceLastHeard().getNanos());
                if (!r.get().receivedAt().minus(since).isBefore(cutoff)) {
                    out.add(peer.getName());
                }
            }
        }
        return out;
    }

    /**
     * Who a running phase waits for. While fewer than {@code quorumSize} expected agents are reachable as this
     * replica sees them, every unreachable one: a controller that just started (or a new leader) holds no streams
     * and no reports yet, and "nobody is reachable" must not read as "nobody needs to catch up": the next phases
     * would be written at once, and the agents that reconnect later would switch keys one by one and cut each other
     * off. A group of which fewer than a quorum can be reached cannot fence safely anyway. Otherwise
     * {@link #waitingFor}.
     */
    public static SortedSet<String> awaited(Collection<String> expected, Set<String> reachable,
                                            Function<String, Optional<ReceivedReport>> latest, long revision,
                                            int quorumSize) {
        if (reachable.size() < quorumSize) {
            SortedSet<String> out = new TreeSet<>(expected);
            out.removeAll(reachable);
            return out;
        }
        return waitingFor(reachable, latest, revision);
    }

    /** The reachable agents whose latest report does not show {@code revision} installed. */
    public static SortedSet<String> waitingFor(Set<String> reachable,
                                               Function<String, Optional<ReceivedReport>> latest, long revision) {
        SortedSet<String> out = new TreeSet<>();
        for (String node : reachable) {
            long installed = latest.apply(node).map(r -> r.report().getKeyringRevision()).orElse(0L);
            if (installed < revision) {
                out.add(node);
            }
        }
        return out;
    }

    /**
     * The next step of the group's rotation.
     *
     * @param group     the NodeGroup's name (Events are about it)
     * @param requested the NodeGroup's {@value #ROTATE_ANNOTATION} value, or null
     * @param state     the keyring Secret now
     * @param waiting   the reachable agents that have not reported {@code state.revision()} yet
     * @param newKey    a fresh random key, base64 (called only when a rotation starts)
     */
    public static Plan plan(String group, String requested, KeyringState state, Set<String> waiting,
                            Supplier<String> newKey) {
        String wanted = requested == null ? "" : requested.trim();
        Optional<KeyRotationPhase> running = state.runningPhase();
        if (running.isEmpty()) {
            if (wanted.isEmpty() || wanted.equals(state.completedRequest())) {
                return new Plan(Optional.empty(), completed(state), Optional.empty());
            }
            if (!state.data().containsKey(PRIMARY)) {
                return new Plan(Optional.empty(), Optional.of(new RotationCondition("False", "NoKeyring",
                        "rotation " + wanted + " waits for the keyring Secret to hold a primary key")),
                        Optional.empty());
            }
            Map<String, String> data = new TreeMap<>(state.data());
            data.put(NEXT_KEY, newKey.get());
            return started(group, new KeyringState(data, state.revision() + 1, KeyRotationPhase.INSTALL_SECONDARY,
                    wanted, state.completedRequest()), wanted);
        }
        KeyRotationPhase phase = running.get();
        if (!waiting.isEmpty()) {
            return new Plan(Optional.empty(), Optional.of(inPhase(state, phase, waiting, wanted)), Optional.empty());
        }
        Map<String, String> data = new TreeMap<>(state.data());
        Optional<KeyRotationPhase> next = phase.next();
        if (next.isEmpty()) {
            KeyringState done = new KeyringState(data, state.revision(), null, "", state.request());
            return new Plan(Optional.of(done), completed(done), Optional.of(new GroupEvent(false, group, "Normal",
                    "GossipKeyRotationCompleted", "gossip key rotation " + state.request()
                    + " completed: every reachable agent runs keyring revision " + state.revision()
                    + " with the new key only")));
        }
        if (next.get() == KeyRotationPhase.USE_NEW_PRIMARY) {
            String fresh = data.remove(NEXT_KEY);
            if (fresh == null) {
                return new Plan(Optional.empty(), Optional.of(new RotationCondition("False", "InvalidKeyring",
                        "the keyring Secret lost its data key " + NEXT_KEY + " during phase 1; restore it or remove"
                        + " the rotation annotations from the Secret")), Optional.empty());
            }
            data.put(PREVIOUS_KEY, data.get(PRIMARY));
            data.put(PRIMARY, fresh);
        } else {
            data.remove(PREVIOUS_KEY);
        }
        return started(group, new KeyringState(data, state.revision() + 1, next.get(), state.request(),
                state.completedRequest()), wanted);
    }

    private static Plan started(String group, KeyringState next, String wanted) {
        KeyRotationPhase p = next.phase();
        return new Plan(Optional.of(next), Optional.of(inPhase(next, p, Set.of(), wanted)),
                Optional.of(new GroupEvent(false, group, "Normal", "GossipKey" + p.reason(),
                        "gossip key rotation " + next.request() + ": phase " + p.number() + "/3, " + p.description()
                        + " (keyring revision " + next.revision() + ")")));
    }

    private static RotationCondition inPhase(KeyringState state, KeyRotationPhase phase, Set<String> waiting,
                                             String wanted) {
        StringBuilder m = new StringBuilder("rotation ").append(state.request()).append(": phase ")
                .append(phase.number()).append("/3, ").append(phase.description()).append(" (keyring revision ")
                .append(state.revision()).append(")");
        if (!waiting.isEmpty()) {
            m.append("; WaitingFor: ").append(String.join(",", new TreeSet<>(waiting).stream().limit(LISTED_NODES).toList()));
            if (waiting.size() > LISTED_NODES) {
                m.append(",+").append(waiting.size() - LISTED_NODES).append(" more");
            }
        } else {
            m.append("; waiting for the next report of every reachable agent");
        }
        if (!wanted.isEmpty() && !wanted.equals(state.request())) {
            m.append("; request ").append(wanted).append(" starts after this one");
        }
        return new RotationCondition("False", phase.reason(), m.toString());
    }

    private static Optional<RotationCondition> completed(KeyringState state) {
        if (state.completedRequest().isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new RotationCondition("True", "Completed", "rotation " + state.completedRequest()
                + " completed (keyring revision " + state.revision() + ")"));
    }
}
