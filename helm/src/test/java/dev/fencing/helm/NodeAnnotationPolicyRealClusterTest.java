package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.escalation.FenceArguments;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The chart's ValidatingAdmissionPolicy {@code <fullname>-node-annotations} (with power fencing on), installed by
 * {@code helm install} into a real API server that runs the Node authorizer and NodeRestriction: a kubelet's identity
 * may still write its own Node, but no annotation under the prefix power fencing expands
 * ({@link FenceArguments#NODE_ANNOTATION_PREFIX}), so a compromised node cannot choose which BMC its own power
 * fencing hits. The controller's ServiceAccount and administrators are not held back.
 */
class NodeAnnotationPolicyRealClusterTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.withControllers();

    private static final PatchContext MERGE = PatchContext.of(PatchType.JSON_MERGE);
    private static final String BMC = FenceArguments.NODE_ANNOTATION_PREFIX + "bmc-address";
    private static final List<String> FENCING_CRDS = List.of("nodefencingconfigs.fencing.deckhouse.io",
            "nodefencings.fencing.deckhouse.io");

    private final List<AutoCloseable> cleanup = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            cleanup.get(i).close();
        }
    }

    private static KubernetesClient admin() {
        return KUBE.get().adminClient();
    }

    private static String annotate(String key, String value) {
        return "{\"metadata\":{\"annotations\":{\"" + key + "\":" + (value == null ? "null" : "\"" + value + "\"")
                + "}}}";
    }

    private static void refused(ThrowingCallable call, String key) {
        assertThatThrownBy(call).isInstanceOf(KubernetesClientException.class)
                .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403))
                .hasMessageContaining("a node may not add, change or remove Node annotations under "
                        + FenceArguments.NODE_ANNOTATION_PREFIX).hasMessageContaining(key);
    }

    private String bmcOf(String node) {
        return admin().nodes().withName(node).get().getMetadata().getAnnotations().get(BMC);
    }

    @Test
    void aNodeCannotRewriteTheAnnotationsItsPowerFencingReads() {
        ChartRelease release = new ChartRelease(KUBE.get(), KUBE.get().uniqueName("chart-node-annotations"));
        String fullname = KUBE.get().uniqueName("nmc");
        release.install("fullnameOverride", fullname, "controller.powerFencing.enabled", true, "crds.keep", false);
        cleanup.add(() -> {
            release.uninstall();
            FENCING_CRDS.forEach(crd -> admin().apiextensions().v1().customResourceDefinitions().withName(crd)
                    .delete());
            await().atMost(Duration.ofSeconds(30)).until(() -> FENCING_CRDS.stream().allMatch(crd -> admin()
                    .apiextensions().v1().customResourceDefinitions().withName(crd).get() == null));
        });
        String name = KUBE.get().uniqueName("node-a");
        admin().nodes().resource(new NodeBuilder().withNewMetadata().withName(name).addToAnnotations(BMC,
                "198.18.0.10").endMetadata().build()).create();
        cleanup.add(() -> admin().nodes().withName(name).delete());
        KubernetesClient node = KUBE.get().clientAs("system:node:" + name, "system:nodes");
        cleanup.add(node);

        // The API server's policy informer picks the new policy and binding up within a few seconds; a dry run
        // passes through admission without changing anything.
        await().alias("a node's dry-run patch of " + BMC + " refused with 403").atMost(Duration.ofSeconds(30))
                .until(() -> {
                    try {
                        node.nodes().withName(name).dryRun().patch(MERGE, annotate(BMC, "198.18.0.99"));
                        return false;
                    } catch (KubernetesClientException e) {
                        return e.getCode() == 403;
                    }
                });

        refused(() -> node.nodes().withName(name).patch(MERGE, annotate(BMC, "198.18.0.99")), BMC);
        refused(() -> node.nodes().withName(name).patch(MERGE, annotate(BMC, null)), BMC);
        String plug = FenceArguments.NODE_ANNOTATION_PREFIX + "plug";
        refused(() -> node.nodes().withName(name).patch(MERGE, annotate(plug, "rack1-7")), plug);
        refused(() -> node.nodes().withName(name).subresource("status").patch(MERGE,
                annotate(BMC, "198.18.0.99")), BMC);
        assertThat(bmcOf(name)).isEqualTo("198.18.0.10");

        // A kubelet that deletes its Node cannot register it again with the annotation either.
        String other = KUBE.get().uniqueName("node-b");
        cleanup.add(() -> admin().nodes().withName(other).delete());
        try (KubernetesClient otherNode = KUBE.get().clientAs("system:node:" + other, "system:nodes")) {
            refused(() -> otherNode.nodes().resource(new NodeBuilder().withNewMetadata().withName(other)
                    .addToAnnotations(BMC, "198.18.0.10").endMetadata().build()).create(), BMC);
            otherNode.nodes().resource(new NodeBuilder().withNewMetadata().withName(other).endMetadata().build())
                    .create();
        }

        // Everything else a kubelet does to its Node still passes: other annotations, an update that carries the
        // reserved annotation unchanged, its status.
        node.nodes().withName(name).patch(MERGE, annotate("node.alpha.kubernetes.io/ttl", "0"));
        Node current = node.nodes().withName(name).get();
        current.getMetadata().getAnnotations().put("example.com/rack", "r1");
        node.nodes().resource(current).update();
        node.nodes().withName(name).subresource("status").patch(MERGE,
                "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\","
                        + "\"lastHeartbeatTime\":\"2026-11-23T10:00:00Z\"}]}}");

        // The controller (the chart's ServiceAccount) and administrators may set the annotation.
        try (KubernetesClient controller = KUBE.get().serviceAccountClient(release.namespace(), fullname)) {
            controller.nodes().withName(name).patch(MERGE, annotate(BMC, "198.18.0.11"));
        }
        assertThat(bmcOf(name)).isEqualTo("198.18.0.11");
        admin().nodes().withName(name).patch(MERGE, annotate(BMC, "198.18.0.12"));
        assertThat(bmcOf(name)).isEqualTo("198.18.0.12");

        // kube-controller-manager type-checks the expressions against the Node schema.
        ValidatingAdmissionPolicy policy = await().atMost(Duration.ofSeconds(30)).until(() -> admin()
                .admissionRegistration().v1().validatingAdmissionPolicies().withName(fullname + "-node-annotations")
                .get(), p -> p.getStatus() != null && p.getStatus().getTypeChecking() != null);
        assertThat(policy.getStatus().getTypeChecking().getExpressionWarnings()).as("CEL type-check warnings")
                .isEmpty();
    }
}
