package dev.fencing.nodemanager.realapi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.reconciler.ClusterWriter;
import dev.fencing.nodemanager.reconciler.ClusterWriterPatches;
import dev.fencing.nodemanager.status.NodeFacts;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link ClusterWriter#setOutOfService} against a real kube-apiserver: our taint and marker annotation come and go and
 * nobody else's taint or annotation is touched; a patch computed from a Node that changed meanwhile (the
 * node-lifecycle controller removing {@code unreachable} as the node returns) is refused instead of removing, by
 * index, whatever taint moved into its place.
 */
class OutOfServiceTaintRealApiTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.apiServerOnly();

    private static Node node(String name) {
        return new NodeBuilder().withNewMetadata().withName(name).addToAnnotations("example.com/owner", "someone")
                .endMetadata().withNewSpec()
                .addNewTaint().withKey("node.kubernetes.io/unreachable").withEffect("NoExecute").endTaint()
                .addNewTaint().withKey("dedicated").withValue("db").withEffect("NoSchedule").endTaint()
                .endSpec().build();
    }

    @Test
    void ourTaintComesAndGoesAndEverythingElseStays() {
        KubernetesClient admin = KUBE.get().adminClient();
        ClusterWriter writer = new ClusterWriter(admin, InstantSource.system());
        String name = KUBE.get().uniqueName("node");
        admin.nodes().resource(node(name)).create();
        // As created (the API server's admission may add node.kubernetes.io/not-ready).
        List<String> before = keys(admin, name);
        assertThat(before).contains("node.kubernetes.io/unreachable", "dedicated");

        assertThat(writer.setOutOfService(name, true)).isTrue();
        Node tainted = admin.nodes().withName(name).get();
        assertThat(keys(admin, name)).isEqualTo(plus(before, NodeFacts.OUT_OF_SERVICE_TAINT));
        assertThat(tainted.getMetadata().getAnnotations()).containsEntry("example.com/owner", "someone")
                .containsEntry(NodeFacts.TAINTED_BY_ANNOTATION, NodeFacts.TAINTED_BY);

        assertThat(writer.setOutOfService(name, false)).isTrue();
        Node released = admin.nodes().withName(name).get();
        assertThat(keys(admin, name)).isEqualTo(before);
        assertThat(released.getMetadata().getAnnotations()).isEqualTo(Map.of("example.com/owner", "someone"));

        // A Node without taints or annotations gets both, and loses both again.
        String bare = KUBE.get().uniqueName("node");
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(bare).endMetadata().build()).create();
        List<String> bareBefore = keys(admin, bare);
        assertThat(writer.setOutOfService(bare, true)).isTrue();
        assertThat(keys(admin, bare)).isEqualTo(plus(bareBefore, NodeFacts.OUT_OF_SERVICE_TAINT));
        assertThat(writer.setOutOfService(bare, false)).isTrue();
        assertThat(keys(admin, bare)).isEqualTo(bareBefore);
    }

    @Test
    void aPatchComputedFromANodeThatChangedMeanwhileIsRefusedAndRemovesNobodysTaint() {
        KubernetesClient admin = KUBE.get().adminClient();
        String name = KUBE.get().uniqueName("node");
        admin.nodes().resource(node(name)).create();
        ClusterWriter writer = new ClusterWriter(admin, InstantSource.system());
        assertThat(writer.setOutOfService(name, true)).isTrue();
        Node read = admin.nodes().withName(name).get();
        List<String> afterReturn = new java.util.ArrayList<>(keys(admin, name));
        afterReturn.remove("node.kubernetes.io/unreachable");

        // The node comes back: the node-lifecycle controller removes unreachable (index 0) before our patch lands.
        admin.nodes().withName(name).edit(n -> {
            n.getSpec().getTaints().removeIf(t -> t.getKey().equals("node.kubernetes.io/unreachable"));
            return n;
        });
        String stale = Serialization.asJson(ClusterWriterPatches.outOfService(read, false));
        assertThatThrownBy(() -> admin.nodes().withName(name).patch(PatchContext.of(PatchType.JSON), stale))
                .isInstanceOf(KubernetesClientException.class);
        assertThat(keys(admin, name)).as("nobody's taint removed, ours still there").isEqualTo(afterReturn)
                .contains("dedicated", NodeFacts.OUT_OF_SERVICE_TAINT);

        // Computed again from the Node as it is now, it goes through.
        assertThat(writer.setOutOfService(name, false)).isTrue();
        assertThat(keys(admin, name)).isEqualTo(afterReturn.stream()
                .filter(k -> !k.equals(NodeFacts.OUT_OF_SERVICE_TAINT)).toList()).contains("dedicated");
    }

    private static List<String> keys(KubernetesClient admin, String node) {
        Node n = admin.nodes().withName(node).get();
        return n.getSpec() == null || n.getSpec().getTaints() == null ? List.of()
                : n.getSpec().getTaints().stream().map(Taint::getKey).toList();
    }

    private static List<String> plus(List<String> list, String key) {
        List<String> out = new java.util.ArrayList<>(list);
        out.add(key);
        return out;
    }
}
