package dev.fencing.nodemanager.realcluster;

import dev.fencing.kubetest.RealControlPlane;
import dev.fencing.nodemanager.NodeManager;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;

/**
 * A controller in the test JVM (no leader election) in a namespace of its own, holding the chart's privileges
 * only, on the real control plane with the NodeGroup CRD installed.
 */
final class InProcessController implements AutoCloseable {

    private final String namespace;
    private final KubernetesClient client;
    private NodeManager manager;

    private InProcessController(String namespace, KubernetesClient client, NodeManager manager) {
        this.namespace = namespace;
        this.client = client;
        this.manager = manager;
    }

    /** Installs the CRD, creates namespace {@code prefix-…} and starts the controller there. */
    static InProcessController start(RealControlPlane plane, String prefix) throws IOException {
        RealCluster.installCrd(plane.adminClient());
        String namespace = RealCluster.namespace(plane, prefix);
        KubernetesClient client = RealCluster.client(RealCluster.controllerKubeconfig(plane, namespace));
        return new InProcessController(namespace, client, RealCluster.controller(client, namespace));
    }

    String namespace() {
        return namespace;
    }

    /** The running controller. */
    NodeManager manager() {
        if (manager == null) {
            throw new IllegalStateException("the controller was stopped");
        }
        return manager;
    }

    /** The controller's client (the chart's privileges). */
    KubernetesClient client() {
        return client;
    }

    /** Stops the controller (idempotent); the client stays usable. */
    void stop() {
        if (manager != null) {
            manager.close();
            manager = null;
        }
    }

    @Override
    public void close() {
        stop();
        client.close();
    }
}
