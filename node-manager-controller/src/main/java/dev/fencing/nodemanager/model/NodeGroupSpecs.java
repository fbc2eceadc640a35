package dev.fencing.nodemanager.model;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupFencing;
import dev.fencing.policy.FencingSpecReader;
import java.util.List;
import java.util.Optional;

/** NodeGroup to {@link GroupSpecView}: maps spec.fencing through the api module, keeping parse violations. */
public final class NodeGroupSpecs {

    private NodeGroupSpecs() {
    }

    /** The view of a NodeGroup. */
    public static GroupSpecView view(NodeGroup group) {
        String name = group.getMetadata().getName();
        long generation = Optional.ofNullable(group.getMetadata().getGeneration()).orElse(0L);
        if (!NodeGroupFencing.fencingEnabled(group)) {
            return new GroupSpecView(name, generation, null, List.of());
        }
        FencingSpecReader.Result result = NodeGroupFencing.map(group);
        return new GroupSpecView(name, generation, result.spec(), result.violations());
    }

    /** The view of a group that no longer exists: fencing off. */
    public static GroupSpecView deleted(String name) {
        return new GroupSpecView(name, 0, null, List.of());
    }
}
