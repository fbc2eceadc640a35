package dev.fencing.nodemanager.reconciler;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.nodemanager.status.NodeFacts;
import dev.fencing.nodemanager.testing.CrudMockClient;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.InstantSource;
import org.junit.jupiter.api.Test;

/**
 * The taint write says whether it went through: the reconciler emits its Event (and ends a fencing in the storm
 * guard) only then, and plans a failed one again at the next reconcile.
 */
@CrudMockClient
class ClusterWriterCrudMockTest {

    KubernetesClient client;

    @Test
    void theTaintWriteSaysWhetherItWentThrough() {
        client.nodes().resource(node("w-1", "workers", 1)).create();
        ClusterWriter writer = new ClusterWriter(client, InstantSource.system());

        assertThat(writer.setOutOfService("w-1", true)).isTrue();
        assertThat(NodeFacts.of(client.nodes().withName("w-1").get(), null).outOfServiceByUs()).isTrue();
        assertThat(writer.setOutOfService("w-1", false)).isTrue();
        assertThat(NodeFacts.of(client.nodes().withName("w-1").get(), null).outOfServiceByUs()).isFalse();

        assertThat(writer.setOutOfService("gone", true)).as("no such Node").isFalse();
        assertThat(writer.setOutOfService("gone", false)).isFalse();
    }

    /**
     * The reconcile plans a fencing from its caches and writes it a moment later (later still on a slow API server):
     * a Node that is Ready again by then gets neither the taint nor a delete, and the write says it did not go
     * through.
     */
    @Test
    void aNodeThatIsReadyAgainIsNeitherTaintedNorDeleted() {
        client.nodes().resource(new NodeBuilder(node("back", "workers", 1)).editStatus().addNewCondition()
                .withType("Ready").withStatus("True").endCondition().endStatus().build()).create();
        client.nodes().resource(new NodeBuilder(node("gone", "workers", 2)).editStatus().addNewCondition()
                .withType("Ready").withStatus("Unknown").endCondition().endStatus().build()).create();
        ClusterWriter writer = new ClusterWriter(client, InstantSource.system());

        assertThat(writer.setOutOfService("back", true)).isFalse();
        assertThat(NodeFacts.of(client.nodes().withName("back").get(), null).outOfServiceByUs()).isFalse();
        assertThat(writer.deleteNode("back")).isFalse();
        assertThat(client.nodes().withName("back").get()).isNotNull();

        assertThat(writer.setOutOfService("gone", true)).isTrue();
        assertThat(writer.setOutOfService("gone", false)).as("our taint goes whatever Ready says").isTrue();
        assertThat(writer.deleteNode("gone")).isTrue();
        assertThat(client.nodes().withName("gone").get()).isNull();
        assertThat(writer.deleteNode("gone")).as("already gone").isTrue();
    }
}
