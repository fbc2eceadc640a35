package dev.fencing.nodemanager.reconciler;

import io.fabric8.kubernetes.api.model.Node;
import java.util.List;
import java.util.Map;

/** Test access to {@link ClusterWriter}'s patches from other packages. */
public final class ClusterWriterPatches {

    private ClusterWriterPatches() {
    }

    /** {@link ClusterWriter#outOfServicePatch}. */
    public static List<Map<String, Object>> outOfService(Node n, boolean add) {
        return ClusterWriter.outOfServicePatch(n, add, "2026-11-29T00:00:00Z");
    }
}
