package dev.fencing.nodemanager.realcluster;

import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.dependent.AgentDaemonSetFactory;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.rbac.ChartRoles;
import dev.fencing.kubetest.RealControlPlane;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.config.AgentControlSecurity;
import dev.fencing.nodemanager.config.ClientKeyAlgorithm;
import dev.fencing.nodemanager.config.ControllerConfig;
import java.nio.file.Files;
import java.time.InstantSource;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the controller tests on the real control plane share: the NodeGroup CRD, a namespace with the agents'
 * ServiceAccount, a kubeconfig for a user holding exactly the chart's roles, registered Nodes the scheduler can bind
 * agent pods to (no kubelet: no container ever runs), and the agent pods the real DaemonSet controller creates.
 */
final class RealCluster {

    /** The agents' ServiceAccount, as the chart names it. */
    static final String AGENT_SERVICE_ACCOUNT = "fencing-agent";

    private RealCluster() {
    }

    /** Installs the generated NodeGroup CRD (shared by every test on this API server) and waits until it serves. */
    static void installCrd(KubernetesClient admin) {
        CustomResourceDefinition crd;
        try (InputStream in = RealCluster.class.getResourceAsStream(
                "/META-INF/fabric8/nodegroups.deckhouse.io-v1.yml")) {
            crd = admin.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (admin.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName()).get()
                == null) {
            try {
                admin.resource(crd).create();
            } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
            }
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            CustomResourceDefinition c = admin.apiextensions().v1().customResourceDefinitions()
                    .withName(crd.getMetadata().getName()).get();
            return c.getStatus() != null && c.getStatus().getConditions().stream()
                    .anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus()));
        });
        // Discovery and the REST mapping follow the Established condition a moment later.
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                .until(() -> admin.resources(NodeGroup.class).list() != null);
    }

    /** Creates a namespace {@code prefix-…} with the agents' ServiceAccount. */
    static String namespace(RealControlPlane plane, String prefix) {
        String ns = plane.uniqueName(prefix);
        KubernetesClient admin = plane.adminClient();
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                .create();
        admin.serviceAccounts().inNamespace(ns).resource(new ServiceAccountBuilder().withNewMetadata()
                .withName(AGENT_SERVICE_ACCOUNT).withNamespace(ns).endMetadata().build()).create();
        return ns;
    }

    /**
     * A kubeconfig of the user {@code fencing-controller-<namespace>}, which holds the chart's ClusterRole and Roles
     * (rendered by Helm for a release in {@code namespace}) and nothing else.
     */
    static Path controllerKubeconfig(RealControlPlane plane, String namespace) {
        String user = "fencing-controller-" + namespace;
        ChartRoles.grant(plane.adminClient(), namespace, namespace, user);
        return plane.kubeconfigFor(user);
    }

    /**
     * A Node as a kubelet registers it (hostname label, addresses, capacity), labelled into {@code group}; the
     * scheduler can bind pods to it, nothing runs them.
     */
    static Node node(String name, String group, String address) {
        Map<String, Quantity> capacity = Map.of("cpu", new Quantity("4"), "memory", new Quantity("8Gi"),
                "pods", new Quantity("110"));
        return new NodeBuilder()
                .withNewMetadata().withName(name)
                    .addToLabels(NodeLabels.GROUP, group)
                    .addToLabels("kubernetes.io/hostname", name)
                    .addToLabels("kubernetes.io/os", "linux")
                .endMetadata()
                .withNewStatus()
                    .addNewAddress().withType("InternalIP").withAddress(address).endAddress()
                    .addNewAddress().withType("Hostname").withAddress(name).endAddress()
                    .withCapacity(capacity)
                    .withAllocatable(capacity)
                .endStatus()
                .build();
    }

    /** Registers {@code count} Nodes {@code <group>-1..count} in {@code group}; returns their names. */
    static List<String> registerNodes(KubernetesClient admin, String group, int count, int subnet) {
        List<String> names = new java.util.ArrayList<>();
        for (int i = 1; i <= count; i++) {
            String name = group + "-" + i;
            admin.nodes().resource(node(name, group, "198.18." + subnet + "." + i)).create();
            names.add(name);
        }
        return names;
    }

    /** A fencing-enabled (Watchdog) NodeGroup named {@code name}. */
    static NodeGroup watchdogGroup(String name, Fencing fencing) {
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName(name).build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(fencing.withMode("Watchdog")));
        return g;
    }

    /**
     * The agent pods of {@code group}'s DaemonSet, one per node in {@code nodes}, once the real DaemonSet controller
     * has created them and the real scheduler has bound each to its node.
     *
     * @return pod by node name
     */
    static Map<String, Pod> agentPods(KubernetesClient admin, String namespace, String group,
                                      Collection<String> nodes) {
        return await().atMost(Duration.ofSeconds(40)).until(() -> {
            Map<String, Pod> byNode = new TreeMap<>();
            for (Pod p : admin.pods().inNamespace(namespace)
                    .withLabel(AgentDaemonSetFactory.GROUP_LABEL, group).list().getItems()) {
                String node = p.getSpec().getNodeName();
                if (node != null && p.getMetadata().getDeletionTimestamp() == null) {
                    byNode.put(node, p);
                }
            }
            return byNode;
        }, m -> m.keySet().containsAll(nodes));
    }

    /** Deletes a pod at once (no kubelet ever confirms a graceful deletion here). */
    static void forceDelete(KubernetesClient admin, Pod pod) {
        admin.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                .withGracePeriod(0).delete();
    }

    /** A client for the controller from {@code kubeconfig}, as {@code --kubeconfig} builds it. */
    static KubernetesClient client(Path kubeconfig) {
        try {
            return new KubernetesClientBuilder().withConfig(ClientKeyAlgorithm.apply(Config.fromKubeconfig(null,
                    Files.readString(kubeconfig), kubeconfig.toString()))).build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * An in-process controller without leader election on the chart's privileges in {@code namespace}; agents
     * run as {@link #AGENT_SERVICE_ACCOUNT}, AgentControl is plaintext on a loopback port.
     */
    static NodeManager controller(KubernetesClient client, String namespace) throws IOException {
        return controller(client, namespace, InstantSource.system());
    }

    /** {@link #controller(KubernetesClient, String)} on the given wall clock. */
    static NodeManager controller(KubernetesClient client, String namespace, InstantSource clock) throws IOException {
        ControllerConfig config = ControllerConfig.forTests(namespace).withSecurity(null, null,
                new AgentControlSecurity(true, null, "", AGENT_SERVICE_ACCOUNT, Duration.ofSeconds(30)));
        return new NodeManager(client, config, clock, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).start();
    }
}
