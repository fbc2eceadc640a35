package dev.fencing.agent.control;

import dev.fencing.proto.nodemanager.v1.ConfigDelta;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import dev.fencing.proto.nodemanager.v1.Member;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * The configuration an agent holds: a full {@link GroupConfig} plus the (epoch, revision) it corresponds to. Applying
 * controller messages is pure: a full config replaces everything, a delta applies only on top of its base revision.
 *
 * @param epoch    controller history identity
 * @param revision revision within the epoch
 * @param config   the group configuration, members sorted by name
 */
public record MaterialisedConfig(String epoch, long revision, GroupConfig config) {

    /** Checks that all parts are present. */
    public MaterialisedConfig {
        Objects.requireNonNull(epoch, "epoch");
        Objects.requireNonNull(config, "config");
    }

    /** Builds the state from a full config message. */
    public static MaterialisedConfig fromFull(ControllerMessage message) {
        if (!message.hasFull()) {
            throw new IllegalArgumentException("not a full config: " + message.getKindCase());
        }
        return new MaterialisedConfig(message.getEpoch(), message.getRevision(), sortedMembers(message.getFull()));
    }

    /** True when {@code message} is a delta that continues exactly this state (same epoch, base = our revision). */
    public boolean accepts(ControllerMessage message) {
        return message.hasDelta()
                && message.getEpoch().equals(epoch)
                && message.getDelta().getBaseRevision() == revision
                && message.getRevision() > revision;
    }

    /**
     * Applies a delta accepted by {@link #accepts}.
     *
     * @throws IllegalArgumentException when the delta does not continue this state
     */
    public MaterialisedConfig apply(ControllerMessage message) {
        if (!accepts(message)) {
            throw new IllegalArgumentException("delta base=" + message.getDelta().getBaseRevision() + " epoch="
                    + message.getEpoch() + " does not continue epoch=" + epoch + " revision=" + revision);
        }
        ConfigDelta delta = message.getDelta();
        GroupConfig.Builder next = config.toBuilder();
        switch (delta.getChangeCase()) {
            case MEMBER_UPSERTED -> {
                List<Member> members = new ArrayList<>(config.getMembersList());
                members.removeIf(m -> m.getName().equals(delta.getMemberUpserted().getName()));
                members.add(delta.getMemberUpserted());
                members.sort(Comparator.comparing(Member::getName));
                next.clearMembers().addAllMembers(members);
            }
            case MEMBER_REMOVED -> {
                List<Member> members = new ArrayList<>(config.getMembersList());
                members.removeIf(m -> m.getName().equals(delta.getMemberRemoved()));
                next.clearMembers().addAllMembers(members);
            }
            case SIGNALS -> next.setSignals(delta.getSignals());
            case POLICY -> next.setPolicy(delta.getPolicy());
            case KEYRING -> next.setKeyring(delta.getKeyring());
            case CHANGE_NOT_SET -> {
                // An empty change still advances the revision (a newer controller may send a change we do not know).
            }
        }
        return new MaterialisedConfig(epoch, message.getRevision(), next.build());
    }

    private static GroupConfig sortedMembers(GroupConfig config) {
        List<Member> members = new ArrayList<>(config.getMembersList());
        members.sort(Comparator.comparing(Member::getName));
        return config.toBuilder().clearMembers().addAllMembers(members).build();
    }
}
