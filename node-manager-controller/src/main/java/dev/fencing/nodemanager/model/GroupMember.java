package dev.fencing.nodemanager.model;

import java.util.Map;
import java.util.Objects;

/**
 * An expected member of a group.
 *
 * @param name          Kubernetes node name (= gossip member name)
 * @param gossipAddress host:port the member's agent gossips on
 * @param addresses     node addresses per network type (InternalIP, ExternalIP, Hostname, ...)
 */
public record GroupMember(String name, String gossipAddress, Map<String, String> addresses) {

    /** Copies the map. */
    public GroupMember {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(gossipAddress, "gossipAddress");
        addresses = Map.copyOf(addresses);
    }
}
