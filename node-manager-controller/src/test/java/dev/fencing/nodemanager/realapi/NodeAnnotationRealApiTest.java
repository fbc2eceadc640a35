package dev.fencing.nodemanager.realapi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.model.GossipAddressAnnotation;
import dev.fencing.nodemanager.reconciler.ClusterWriter;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.InstantSource;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link ClusterWriter#patchAnnotation} against a real kube-apiserver: the gossip-address annotation is set on a Node
 * without annotations, replaced, and removed, and nobody else's annotation or label is touched on the way.
 */
class NodeAnnotationRealApiTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.apiServerOnly();

    private static final String KEY = GossipAddressAnnotation.KEY;

    @Test
    void theGossipAddressAnnotationIsSetReplacedAndRemovedLeavingEverythingElseAlone() {
        KubernetesClient admin = KUBE.get().adminClient();
        ClusterWriter writer = new ClusterWriter(admin, InstantSource.system());
        String bare = KUBE.get().uniqueName("node");
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(bare).endMetadata().build()).create();
        assertThat(admin.nodes().withName(bare).get().getMetadata().getAnnotations()).isNullOrEmpty();

        assertThat(writer.patchAnnotation(bare, KEY, "198.19.0.0/24=198.19.0.21")).isTrue();
        assertThat(admin.nodes().withName(bare).get().getMetadata().getAnnotations())
                .isEqualTo(Map.of(KEY, "198.19.0.0/24=198.19.0.21"));

        String busy = KUBE.get().uniqueName("node");
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(busy)
                .addToAnnotations("example.com/owner", "someone").addToLabels("example.com/l", "v").endMetadata()
                .build()).create();
        assertThat(writer.patchAnnotation(busy, KEY, "198.19.0.0/24=198.19.0.21")).isTrue();
        assertThat(writer.patchAnnotation(busy, KEY, "198.19.0.0/24=198.19.0.33")).isTrue();
        assertThat(admin.nodes().withName(busy).get().getMetadata().getAnnotations())
                .isEqualTo(Map.of("example.com/owner", "someone", KEY, "198.19.0.0/24=198.19.0.33"));

        assertThat(writer.patchAnnotation(busy, KEY, null)).isTrue();
        assertThat(admin.nodes().withName(busy).get().getMetadata().getAnnotations())
                .isEqualTo(Map.of("example.com/owner", "someone"));
        assertThat(admin.nodes().withName(busy).get().getMetadata().getLabels()).containsEntry("example.com/l", "v");
        // Removing what is no longer there (a lagging cache) is refused by the server and reported, not thrown.
        assertThat(writer.patchAnnotation(busy, KEY, null)).isFalse();
    }
}
