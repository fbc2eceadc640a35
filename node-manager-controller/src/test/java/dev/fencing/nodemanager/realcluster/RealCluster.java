package dev.fencing.nodemanager.realcluster;

import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.dependent.AgentDaemonSetFactory;
import dev.fencing.nodemanager.grpc.TestAgent;
import dev.fencing.nodemanager.grpc.auth.TokenReviewer;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
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
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.grpc.ManagedChannel;
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
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

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

    /**
     * A lab for controller processes electing a leader: the CRD installed, a namespace with the chart's privileges
     * for the controller's user, a unique group name and its Lease name.
     */
    record LeaderElectedLab(KubernetesClient admin, String namespace, Path kubeconfig, String group,
                            String leaseName) {

        static LeaderElectedLab create(RealControlPlane plane, String prefix) {
            KubernetesClient admin = plane.adminClient();
            installCrd(admin);
            String namespace = RealCluster.namespace(plane, prefix);
            Path kubeconfig = controllerKubeconfig(plane, namespace);
            String group = plane.uniqueName(prefix);
            return new LeaderElectedLab(admin, namespace, kubeconfig, group, "node-manager-" + group);
        }

        /** {@link #leaderElectedArgs} for this lab. */
        List<String> args(String... extra) {
            return leaderElectedArgs(kubeconfig, namespace, leaseName, extra);
        }

        /** A controller process logging to {@code target/kube-logs/<group>/<name>.log}. */
        ControllerProcess start(String name, List<String> args) throws IOException {
            return ControllerProcess.start(name, Path.of("target", "kube-logs", group), args);
        }

        /** The Lease once a replica holds it. */
        Lease awaitHeldLease() {
            return await().atMost(Duration.ofSeconds(60)).until(
                    () -> admin.leases().inNamespace(namespace).withName(leaseName).get(),
                    l -> l != null && l.getSpec().getHolderIdentity() != null);
        }
    }

    /**
     * Arguments of a controller process with leader election on a fast Lease (4 s) and a 1 s status interval, reached
     * on 127.0.0.1 without TLS; the agent controller address is the Service's, as the chart passes it.
     */
    static List<String> leaderElectedArgs(Path kubeconfig, String namespace, String leaseName, String... extra) {
        List<String> args = new java.util.ArrayList<>(List.of("--kubeconfig", kubeconfig.toString(),
                "--namespace", namespace, "--leader-election", "--lease-name", leaseName,
                "--leader-lease-duration", "4s", "--leader-renew-deadline", "3s", "--leader-retry-period", "500ms",
                "--status-interval", "1s", "--advertise-host", "127.0.0.1", "--insecure-plaintext",
                "--agent-service-account", AGENT_SERVICE_ACCOUNT,
                "--agent-controller-address", "node-manager-controller." + namespace + ".svc:9650",
                "--agent-image", "registry.example/fencing-agent:test"));
        args.addAll(List.of(extra));
        return List.copyOf(args);
    }

    /** A projected token of {@code pod}'s agent ServiceAccount for the controller's audience, valid 10 minutes. */
    static String agentToken(RealControlPlane plane, String namespace, Pod pod) {
        return plane.requestToken(namespace, AGENT_SERVICE_ACCOUNT, List.of(TokenReviewer.AUDIENCE),
                Duration.ofMinutes(10), pod.getMetadata().getName(), pod.getMetadata().getUid());
    }

    /** Closes {@code closing} last first: agents before channels before controller processes. */
    static void closeInReverse(List<AutoCloseable> closing) throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    /** The controller process holding {@code lease}, as its identity ({@code <pod>@<advertised address>}) says. */
    static ControllerProcess holder(Lease lease, ControllerProcess a, ControllerProcess b) {
        String identity = lease.getSpec().getHolderIdentity();
        if (identity.endsWith("@127.0.0.1:" + a.grpcPort())) {
            return a;
        }
        if (identity.endsWith("@127.0.0.1:" + b.grpcPort())) {
            return b;
        }
        throw new AssertionError("Lease held by " + identity + ", neither " + a + " nor " + b);
    }

    /** An agent stream a replica serves, and the full config it opened with. */
    record Served(TestAgent agent, ControllerMessage full) {
    }

    /**
     * Connects as {@code node}'s agent until the replica serves the group (its keyring Secret and model may still be
     * on their way); the caller closes the agent.
     */
    static Served connectServed(ManagedChannel channel, String node, String token) {
        return await().atMost(Duration.ofSeconds(30)).until(() -> {
            TestAgent agent = TestAgent.connect(channel, node, token);
            ControllerMessage m = await().atMost(Duration.ofSeconds(10)).until(
                    () -> agent.closed.isDone() ? ControllerMessage.getDefaultInstance()
                            : agent.received.poll(100, TimeUnit.MILLISECONDS), Objects::nonNull);
            if (m.hasFull()) {
                return new Served(agent, m);
            }
            agent.close();
            return null;
        }, Objects::nonNull);
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
