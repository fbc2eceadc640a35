package dev.fencing.nodemanager.testing;

import dev.fencing.kubetest.PlatformDefinedStatus;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** The NodeGroup CRDs the controller tests install: this project's, and one whose status a platform defines. */
public final class NodeGroupCrds {

    private NodeGroupCrds() {
    }

    /** The CRD this project ships (api/crds), as generated from the API classes into the fencing-api jar. */
    public static CustomResourceDefinition own(KubernetesClient client) {
        try (InputStream in = NodeGroupCrds.class
                .getResourceAsStream("/META-INF/fabric8/nodegroups.deckhouse.io-v1.yml")) {
            return client.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The same CRD with the status a platform that owns the NodeGroup defines for itself, as Deckhouse's does: its own
     * counters and conditions of type, status, message and lastTransitionTime, nothing else kept.
     */
    public static CustomResourceDefinition platformDefined(KubernetesClient client) {
        return PlatformDefinedStatus.apply(own(client));
    }

    /** Installs this project's CRD into the API server {@code client} talks to. */
    public static void install(KubernetesClient client) {
        client.apiextensions().v1().customResourceDefinitions().resource(own(client)).create();
    }
}
