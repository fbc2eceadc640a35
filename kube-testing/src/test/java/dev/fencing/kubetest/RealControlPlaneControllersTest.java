package dev.fencing.kubetest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The controller manager and the scheduler of the fixture do their jobs. */
class RealControlPlaneControllersTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.withControllers();

    @Test
    void theControllerManagerGivesANewNamespaceItsDefaultServiceAccount() {
        KubernetesClient admin = KUBE.get().adminClient();
        String ns = KUBE.get().uniqueName("kcm");
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                .create();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> admin.serviceAccounts().inNamespace(ns).withName("default").get() != null);
    }

    @Test
    void theSchedulerBindsAPodToANode() {
        KubernetesClient admin = KUBE.get().adminClient();
        String node = KUBE.get().uniqueName("node");
        String ns = KUBE.get().uniqueName("sched");
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                .create();
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata()
                .withNewStatus().withCapacity(Map.of("cpu", new Quantity("2"), "memory", new Quantity("4Gi"),
                        "pods", new Quantity("10")))
                .withAllocatable(Map.of("cpu", new Quantity("2"), "memory", new Quantity("4Gi"),
                        "pods", new Quantity("10")))
                .endStatus().build()).create();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> admin.serviceAccounts().inNamespace(ns).withName("default").get() != null);
        admin.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName("p").endMetadata()
                .withNewSpec().withNodeSelector(Map.of("kubernetes.io/hostname", node))
                .addNewToleration().withOperator("Exists").endToleration()
                .addNewContainer().withName("c").withImage("example.invalid/none:1").endContainer()
                .endSpec().build()).create();
        // the Node carries no hostname label until someone sets it, as a kubelet would at registration
        admin.nodes().withName(node).edit(n -> new NodeBuilder(n).editMetadata()
                .addToLabels("kubernetes.io/hostname", node).endMetadata().build());
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            Pod pod = admin.pods().inNamespace(ns).withName("p").get();
            return node.equals(pod.getSpec().getNodeName());
        });
        admin.nodes().withName(node).delete();
    }
}
