package dev.fencing.nodemanager.grpc;

import dev.fencing.nodemanager.model.GroupModel;
import java.util.Optional;

/** What the AgentControl service looks up in the informer caches. */
public interface AgentDirectory {

    /** The fencing-enabled NodeGroup the node is labelled into, if the cache knows one. */
    Optional<String> groupOf(String node);

    /** The latest model of a group. */
    Optional<GroupModel> model(String group);

    /** Why a group's agents cannot be served yet besides its spec (e.g. no gossip keyring), if known. */
    default Optional<String> notServedReason(String group) {
        return Optional.empty();
    }
}
