package dev.fencing.nodemanager.realapi;

import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.NodeGroup;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;

/** What the controller's tests on a real API server share: the generated CRD, installed once and Established. */
public final class RealApiNodeGroups {

    private RealApiNodeGroups() {
    }

    /** Applies the generated NodeGroup CRD (idempotent: test classes share the server) and waits for Established. */
    public static void installCrd(KubernetesClient admin) {
        CustomResourceDefinition crd;
        try (InputStream in = RealApiNodeGroups.class.getResourceAsStream(
                "/META-INF/fabric8/" + NodeGroup.CRD_NAME + "-v1.yml")) {
            crd = admin.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        admin.apiextensions().v1().customResourceDefinitions().resource(crd)
                .fieldManager("fencing-tests").forceConflicts().serverSideApply();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            CustomResourceDefinition c = admin.apiextensions().v1().customResourceDefinitions()
                    .withName(NodeGroup.CRD_NAME).get();
            return c != null && c.getStatus() != null && c.getStatus().getConditions().stream()
                    .anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus()));
        });
    }

    /** Creates a namespace. */
    public static String namespace(KubernetesClient admin, String name) {
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
                .create();
        return name;
    }
}
