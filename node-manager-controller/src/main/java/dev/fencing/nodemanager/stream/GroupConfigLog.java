package dev.fencing.nodemanager.stream;

import dev.fencing.nodemanager.model.GroupMember;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.model.NodeSignal;
import dev.fencing.policy.PolicyProtos;
import dev.fencing.proto.nodemanager.v1.ConfigDelta;
import dev.fencing.proto.nodemanager.v1.FencingPolicy;
import dev.fencing.proto.nodemanager.v1.GossipKeyring;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import dev.fencing.proto.nodemanager.v1.Member;
import dev.fencing.proto.nodemanager.v1.NodeSignals;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * The configuration of one group as agents see it, with a bounded history of changes. Pure and single-threaded:
 * the caller serialises access. Each {@link #update(GroupModel)} diffs the new model against the current state and
 * appends one change per member, signals entry or policy that differs, so a Node change costs one small delta per
 * affected agent, never the member list.
 *
 * <p>Revisions come from a counter shared by every group of this controller process (one epoch), so they are
 * strictly increasing for every agent; an agent's delta chain is built from the revisions it actually received.
 */
public final class GroupConfigLog {

    /** Nodes that left the group keep a "being removed" signals entry for their still-connected agent; bounded. */
    static final int MAX_DEPARTED = 4096;

    private final String group;
    private final LongSupplier nextRevision;
    private final int historyLimit;
    private final boolean requireKeyring;
    private final TreeMap<String, Member> members = new TreeMap<>();
    private final Map<String, NodeSignals> signals = new HashMap<>();
    private final LinkedHashMap<String, NodeSignals> departed = new LinkedHashMap<>();
    private final Deque<ConfigChange> history = new ArrayDeque<>();
    // The batch of the update running (0: none), and the last one handed out.
    private long batch;
    private long batches;
    private FencingPolicy policy;
    private GossipKeyring keyring = GossipKeyring.getDefaultInstance();
    private long revision;
    private long floor;
    // The generation of the model applied last, and whether that model was invalid (the policy is frozen).
    private long generation;
    private boolean frozen;

    /**
     * @param group        NodeGroup name
     * @param nextRevision the process-wide revision counter
     * @param historyLimit how many changes are kept for agents resuming by revision
     */
    public GroupConfigLog(String group, LongSupplier nextRevision, int historyLimit) {
        this(group, nextRevision, historyLimit, false);
    }

    /**
     * @param requireKeyring agents are served only once a gossip keyring is known (encryption on: an agent must
     *                       never start gossiping in the clear)
     */
    public GroupConfigLog(String group, LongSupplier nextRevision, int historyLimit, boolean requireKeyring) {
        this.group = group;
        this.nextRevision = nextRevision;
        this.historyLimit = historyLimit;
        this.requireKeyring = requireKeyring;
    }

    /** The group name. */
    public String group() {
        return group;
    }

    /** The latest revision of this group (0 before the first change). */
    public long revision() {
        return revision;
    }

    /** True once a valid policy (and, when required, a keyring) is known: agents can be given a full config. */
    public boolean ready() {
        return policy != null && (!requireKeyring || !keyring.getPrimary().isEmpty());
    }

    /** The names of the expected members currently held (a copy). */
    public java.util.Set<String> memberNames() {
        return new java.util.TreeSet<>(members.keySet());
    }

    /** The number of expected members currently held. */
    public int memberCount() {
        return members.size();
    }

    /**
     * Brings the state to {@code model} and returns the changes (each with a new revision), in order. An invalid
     * model (no resolved policy) keeps the last valid policy and the members that go with it: agents keep running on
     * them while the condition on the NodeGroup says what to fix; signals (maintenance, removal) still follow the
     * cluster.
     */
    public List<ConfigChange> update(GroupModel model) {
        return update(model, null);
    }

    /**
     * Like {@link #update(GroupModel)}, also bringing the gossip keyring to {@code nextKeyring} (null: keep the
     * current one; a keyring that cannot be read must not switch agents to plaintext).
     */
    public List<ConfigChange> update(GroupModel model, GossipKeyring nextKeyring) {
        return update(model, nextKeyring, null);
    }

    /**
     * Like {@link #update(GroupModel, GossipKeyring)}; when {@code model} is invalid and this log holds no valid
     * policy yet (a controller that started while the spec was invalid), {@code lastValid} (policy and members, as
     * an earlier controller served them; null: none) becomes the policy and members served, as if this log had
     * seen them valid before.
     */
    public List<ConfigChange> update(GroupModel model, GossipKeyring nextKeyring, GroupConfig lastValid) {
        List<ConfigChange> out = new ArrayList<>();
        // Every change of this update shares one batch: an agent applies them together (ConfigDelta.more).
        batch = ++batches;
        try {
            return updateBatch(model, nextKeyring, lastValid, out);
        } finally {
            batch = 0;
        }
    }

    private List<ConfigChange> updateBatch(GroupModel model, GossipKeyring nextKeyring, GroupConfig lastValid,
                                           List<ConfigChange> out) {
        if (nextKeyring != null && !nextKeyring.equals(keyring)) {
            out.add(setKeyring(nextKeyring));
        }
        Set<String> heldKeys = new HashSet<>();
        Set<String> known = new HashSet<>(signals.keySet());
        known.addAll(departed.keySet());
        for (String node : members.keySet()) {
            if (holdsKeys(node)) {
                heldKeys.add(node);
            }
        }
        updateConfig(model, lastValid, out);
        for (String node : members.keySet()) {
            if (!heldKeys.contains(node) && known.contains(node) && holdsKeys(node)
                    && !keyring.getPrimary().isEmpty()) {
                // Its agent may still be connected from before and missed keyring changes while it held no keys.
                out.add(append(ConfigDelta.newBuilder().setKeyring(keyring).build(), node));
            }
        }
        return out;
    }

    private void updateConfig(GroupModel model, GroupConfig lastValid, List<ConfigChange> out) {
        generation = model.generation();
        frozen = model.policy() == null;
        if (model.policy() == null && policy == null && lastValid != null) {
            Map<String, Member> kept = new TreeMap<>();
            lastValid.getMembersList().forEach(m -> kept.put(m.getName(), m));
            updateMembers(kept, out);
            policy = lastValid.getPolicy();
            out.add(append(ConfigDelta.newBuilder().setPolicy(policy).build(), null));
        }
        if (model.policy() == null && policy != null) {
            // An invalid spec keeps the last valid policy, and so the members that go with it: a member list that
            // moved on under a frozen quorum size would stop being its majority (10 members, quorum 6; 4 removed:
            // 6 of 6 needed, one failure fences the rest). Signals and keys still follow (holdsKeys).
            updateSignals(model, out);
            return;
        }
        Map<String, Member> expected = new TreeMap<>();
        for (GroupMember m : model.expected().values()) {
            expected.put(m.name(), ConfigProtos.member(m));
        }
        updateMembers(expected, out);
        updateSignals(model, out);
        if (model.policy() != null) {
            FencingPolicy next = PolicyProtos.toProto(model.policy());
            if (!next.equals(policy)) {
                policy = next;
                out.add(append(ConfigDelta.newBuilder().setPolicy(next).build(), null));
            }
        }
    }

    private void updateMembers(Map<String, Member> expected, List<ConfigChange> out) {
        // Removals first, so a shrinking group never briefly lists a departed member next to a new policy.
        Iterator<Map.Entry<String, Member>> it = members.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<String, Member> e = it.next();
            if (!expected.containsKey(e.getKey())) {
                it.remove();
                out.add(append(ConfigDelta.newBuilder().setMemberRemoved(e.getKey()).build(), null));
            }
        }
        for (Member proto : expected.values()) {
            Member old = members.get(proto.getName());
            if (!proto.equals(old)) {
                members.put(proto.getName(), proto);
                out.add(append(ConfigDelta.newBuilder().setMemberUpserted(proto).build(), null));
            }
        }
    }

    /** Whether a valid policy is held (from a valid model, or kept from an earlier controller). */
    public boolean hasPolicy() {
        return policy != null;
    }

    /**
     * The policy served and the members that go with it (group, policy, members; no node, signals or keys), with
     * the generation of the model applied last and whether it froze them, or empty before a valid policy is known:
     * what a later controller needs to serve the same while the spec is invalid.
     */
    public Optional<ServedConfig> lastValid() {
        if (policy == null) {
            return Optional.empty();
        }
        return Optional.of(new ServedConfig(GroupConfig.newBuilder().setGroup(group).setPolicy(policy)
                .addAllMembers(members.values()).build(), generation, frozen));
    }

    private void updateSignals(GroupModel model, List<ConfigChange> out) {
        // Signals: every labelled node, plus "left the group" for nodes that were here and are gone.
        for (Map.Entry<String, NodeSignal> e : model.signals().entrySet()) {
            setSignals(e.getKey(), ConfigProtos.signals(e.getValue()), out);
            departed.remove(e.getKey());
        }
        for (String gone : new ArrayList<>(signals.keySet())) {
            if (!model.signals().containsKey(gone)) {
                NodeSignals left = ConfigProtos.signals(NodeSignal.leftGroup(group));
                setSignals(gone, left, out);
                signals.remove(gone);
                departed.put(gone, left);
            }
        }
        while (departed.size() > MAX_DEPARTED) {
            departed.remove(departed.keySet().iterator().next());
        }
    }

    /** Replaces the gossip keyring (rotation); returns the change. */
    public ConfigChange setKeyring(GossipKeyring next) {
        keyring = next;
        return append(ConfigDelta.newBuilder().setKeyring(next).build(), null);
    }

    /** True when this log knows {@code node}: labelled into the group now, or recently departed from it. */
    public boolean knows(String node) {
        return signals.containsKey(node) || departed.containsKey(node);
    }

    /** The full config for the agent of {@code node}, or empty before a valid policy is known. */
    public Optional<GroupConfig> full(String node) {
        if (!ready()) {
            return Optional.empty();
        }
        GroupConfig.Builder full = GroupConfig.newBuilder()
                .setGroup(group)
                .setNodeName(node)
                .setPolicy(policy)
                .addAllMembers(members.values())
                .setSignals(signalsOf(node));
        if (holdsKeys(node)) {
            // Keys go only to expected members; a departed or foreign node learns none.
            full.setKeyring(keyring);
        }
        return Optional.of(full.build());
    }

    /**
     * The changes after {@code sinceRevision} that concern {@code node}, or empty when the history no longer reaches
     * back that far (the agent then needs a full config).
     */
    public Optional<List<ConfigChange>> since(long sinceRevision, String node) {
        if (!ready() || sinceRevision < floor) {
            return Optional.empty();
        }
        List<ConfigChange> out = new ArrayList<>();
        for (ConfigChange c : history) {
            if (c.revision() > sinceRevision && concerns(c, node)) {
                out.add(c);
            }
        }
        return Optional.of(out);
    }

    /**
     * True when the agent of {@code node} must receive {@code change}. Keys go only to expected members: a departed,
     * being-removed or foreign node never learns a key, not even one rotated while its stream is still open.
     */
    public boolean concerns(ConfigChange change, String node) {
        return change.concerns(node) && (!change.delta().hasKeyring() || holdsKeys(node));
    }

    /**
     * Whether the agent of {@code node} may hold the group's keys: a member served, and labelled into the group now
     * without being removed. The two differ only while the spec is invalid: the members are then frozen for the
     * quorum math, but a node removed meanwhile (perhaps to evict it with a key rotation) must learn no new key.
     */
    private boolean holdsKeys(String node) {
        NodeSignals now = signals.get(node);
        return members.containsKey(node) && now != null && !now.getBeingRemoved();
    }

    /** The signals the agent of {@code node} should hold now. */
    public NodeSignals signalsOf(String node) {
        NodeSignals s = signals.get(node);
        if (s == null) {
            s = departed.get(node);
        }
        return s != null ? s : ConfigProtos.signals(NodeSignal.leftGroup(group));
    }

    private void setSignals(String node, NodeSignals next, List<ConfigChange> out) {
        NodeSignals old = signals.get(node);
        if (old == null) {
            old = departed.get(node);
        }
        signals.put(node, next);
        if (!next.equals(old)) {
            out.add(append(ConfigDelta.newBuilder().setSignals(next).build(), node));
        }
    }

    private ConfigChange append(ConfigDelta delta, String targetNode) {
        revision = nextRevision.getAsLong();
        ConfigChange change = batch == 0 ? new ConfigChange(revision, delta, targetNode)
                : new ConfigChange(revision, delta, targetNode, batch);
        history.addLast(change);
        while (history.size() > historyLimit) {
            floor = history.removeFirst().revision();
        }
        return change;
    }
}
