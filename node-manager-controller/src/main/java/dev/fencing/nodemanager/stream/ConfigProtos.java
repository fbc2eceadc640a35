package dev.fencing.nodemanager.stream;

import dev.fencing.nodemanager.model.GroupMember;
import dev.fencing.nodemanager.model.NodeSignal;
import dev.fencing.proto.nodemanager.v1.Maintenance;
import dev.fencing.proto.nodemanager.v1.Member;
import dev.fencing.proto.nodemanager.v1.NodeSignals;

/** Model values to AgentControl messages. */
public final class ConfigProtos {

    private ConfigProtos() {
    }

    /** A member as sent to agents. */
    public static Member member(GroupMember member) {
        return Member.newBuilder()
                .setName(member.name())
                .setGossipAddress(member.gossipAddress())
                .putAllAddresses(member.addresses())
                .putAllGossipAddresses(member.gossipAddresses())
                .build();
    }

    /** A node's signals as sent to its agent. */
    public static NodeSignals signals(NodeSignal signal) {
        NodeSignals.Builder b = NodeSignals.newBuilder()
                .setBeingRemoved(signal.beingRemoved())
                .setRemovalReason(signal.removalReason());
        if (signal.inMaintenance()) {
            b.setMaintenance(Maintenance.newBuilder()
                    .setSource(signal.maintenanceSource())
                    .setValue(signal.maintenanceValue() == null ? "" : signal.maintenanceValue()));
        }
        return b.build();
    }
}
