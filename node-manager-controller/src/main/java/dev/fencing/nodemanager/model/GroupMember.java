package dev.fencing.nodemanager.model;

import java.util.Map;
import java.util.Objects;

/**
 * An expected member of a group.
 *
 * @param name          Kubernetes node name (= gossip member name)
 * @param gossipAddress host:port the member's agent gossips on
 * @param addresses     node addresses per network type (InternalIP, ExternalIP, Hostname, ...)
 * @param gossipAddresses per gossip network (CIDR of the policy's networks) the host:port its agent reported there
 */
public record GroupMember(String name, String gossipAddress, Map<String, String> addresses,
        Map<String, String> gossipAddresses) {

    /** Copies the maps. */
    public GroupMember {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(gossipAddress, "gossipAddress");
        addresses = Map.copyOf(addresses);
        gossipAddresses = Map.copyOf(gossipAddresses);
    }

    /** A member gossiping on its gossip address alone. */
    public GroupMember(String name, String gossipAddress, Map<String, String> addresses) {
        this(name, gossipAddress, addresses, Map.of());
    }
}
