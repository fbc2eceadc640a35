package dev.fencing.nodemanager.reconciler;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.nodemanager.status.NodeFacts;
import dev.fencing.nodemanager.testing.CrudMockClient;
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
}
