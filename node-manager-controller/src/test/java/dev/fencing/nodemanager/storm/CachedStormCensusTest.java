package dev.fencing.nodemanager.storm;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.status.NodeFacts;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

class CachedStormCensusTest {

    private static Node reported(String name, int ip, String ready) {
        return new NodeBuilder(node(name, "workers", ip)).editStatus().addNewCondition().withType("Ready")
                .withStatus(ready).endCondition().endStatus().build();
    }

    /**
     * A Node no kubelet has reported yet (no Ready condition at all) is neither healthy nor unhealthy: a group whose
     * machines are still joining (or a controller started before the kubelets) is not a storm, and counting it held
     * back the first real fencing for the whole cooldown.
     */
    @Test
    void aNodeNoKubeletReportedYetIsNotCounted() {
        NodeGroup group = new NodeGroup();
        group.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("workers").build());
        group.setSpec(new dev.fencing.api.v1.NodeGroupSpec().withNodeType(dev.fencing.api.v1.NodeType.STATIC)
                .withFencing(new dev.fencing.api.v1.Fencing().withMode("Watchdog")
                        .withWatchdog(new dev.fencing.api.v1.FencingWatchdog().withTimeout("60s"))));
        List<Node> nodes = List.of(reported("workers-1", 1, "True"), reported("workers-2", 2, "False"),
                node("workers-3", "workers", 3));
        GroupModel model = GroupModel.from(group, nodes, 7946);
        assertThat(model.expected()).hasSize(3);

        GroupCensus census = CachedStormCensus.of(model, group, null, nodes);

        assertThat(census.members()).containsExactly("workers-1", "workers-2");
        assertThat(census.healthy()).containsExactly("workers-1");
    }

    /**
     * A group whose spec is invalid stays in the census with its tainted nodes: the fencings in progress there still
     * count cluster-wide, and the mark keeps the guard from admitting anything in it.
     */
    @Test
    void aGroupWithAnInvalidSpecIsCountedWithItsFencingsInProgress() {
        NodeGroup group = new NodeGroup();
        group.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("workers").build());
        group.setSpec(new dev.fencing.api.v1.NodeGroupSpec().withNodeType(dev.fencing.api.v1.NodeType.STATIC)
                .withFencing(new dev.fencing.api.v1.Fencing().withMode("Watchdog")
                        .withWatchdog(new dev.fencing.api.v1.FencingWatchdog().withTimeout("1s"))));
        Node tainted = new NodeBuilder(reported("workers-2", 2, "False")).editMetadata()
                .addToAnnotations(NodeFacts.TAINTED_BY_ANNOTATION, NodeFacts.TAINTED_BY).endMetadata()
                .editOrNewSpec().addNewTaint().withKey(NodeFacts.OUT_OF_SERVICE_TAINT)
                .withValue(NodeFacts.OUT_OF_SERVICE_VALUE).withEffect(NodeFacts.OUT_OF_SERVICE_EFFECT).endTaint()
                .endSpec().build();
        List<Node> nodes = List.of(reported("workers-1", 1, "True"), tainted);
        GroupModel model = GroupModel.from(group, nodes, 7946);
        assertThat(model.valid()).as("a watchdog timeout of 1s is invalid").isFalse();

        GroupCensus census = CachedStormCensus.of(model, group, null, nodes);

        assertThat(census.specValid()).isFalse();
        assertThat(census.members()).containsExactly("workers-1", "workers-2");
        assertThat(census.fencing()).containsExactly("workers-2");
    }
}
