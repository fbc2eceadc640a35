package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.FencingWatchdog;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.kubetest.PlatformDefinedStatus;
import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.dependent.AgentDaemonSetFactory;
import dev.fencing.nodemanager.grpc.auth.BearerTokenCredentials;
import dev.fencing.nodemanager.keyring.KeyRotationPlanner;
import dev.fencing.nodemanager.keyring.KeyringState;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.status.GroupStatusStore;
import dev.fencing.proto.nodemanager.v1.AgentControlGrpc;
import dev.fencing.proto.nodemanager.v1.AgentHello;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.grpc.ManagedChannel;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real controller, in process, with the chart's command line and nothing but a token of the chart's
 * ServiceAccount, after {@code helm install} into a real API server (RBAC on, the chart's roles the only grant): it
 * does its whole job — leader Lease, agent DaemonSet (whose pods the DaemonSet controller creates and the scheduler
 * binds), gossip key Secret, NodeGroup status, an agent authenticated by a real pod-bound token (TokenReview + the
 * pod), Node labels and Events — without a single 403. With one rule cut from the installed ClusterRole the same job
 * meets a 403, and the test sees it.
 */
class ControllerWithChartRbacRealClusterTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.withControllers();

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final PatchContext MERGE = PatchContext.of(PatchType.JSON_MERGE);

    @TempDir
    Path tlsDir;
    private final List<AutoCloseable> cleanup = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            cleanup.get(i).close();
        }
        ChartRelease.deleteCrd(admin());
    }

    private static KubernetesClient admin() {
        return KUBE.get().adminClient();
    }

    /**
     * A release with the CRD (dropped again on uninstall) whose roles {@code afterInstall} may cut (it gets the
     * namespace and the fullname), one Watchdog group of two Nodes, and its controller, not started yet.
     */
    private record Cluster(String namespace, String fullname, String group, List<String> nodes,
                           ChartController controller) {
    }

    private Cluster install(BiConsumer<String, String> afterInstall) throws Exception {
        ChartRelease release = new ChartRelease(KUBE.get(), KUBE.get().uniqueName("chart-rbac"));
        String fullname = KUBE.get().uniqueName("nmc");
        release.install("fullnameOverride", fullname, "crds.install", true, "crds.keep", false);
        cleanup.add(release::uninstall);
        ChartRelease.awaitCrdEstablished(admin());
        ChartRelease.awaitOwnerReferencesAdmitted(KUBE.get());
        afterInstall.accept(release.namespace(), fullname);

        String group = KUBE.get().uniqueName("workers");
        List<String> nodes = List.of(group + "-1", group + "-2");
        for (int i = 0; i < nodes.size(); i++) {
            admin().nodes().resource(node(nodes.get(i), group, i + 1)).create();
        }
        cleanup.add(() -> nodes.forEach(n -> admin().nodes().withName(n).delete()));
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName(group).build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing().withMode("Watchdog")
                .withWatchdog(new FencingWatchdog().withTimeout("60s"))));
        admin().resource(g).create();

        ChartController controller = ChartController.of(KUBE.get(), release.namespace(), fullname, tlsDir);
        cleanup.add(controller);
        return new Cluster(release.namespace(), fullname, group, nodes, controller);
    }

    // A Node as a kubelet registers it: an address for gossip, room for the agent pod.
    private static Node node(String name, String group, int suffix) {
        Map<String, Quantity> room = Map.of("cpu", new Quantity("4"), "memory", new Quantity("8Gi"),
                "pods", new Quantity("110"));
        return new NodeBuilder()
                .withNewMetadata().withName(name).addToLabels(NodeLabels.GROUP, group)
                .addToLabels("kubernetes.io/hostname", name).endMetadata()
                .withNewStatus().withCapacity(room).withAllocatable(room)
                .addNewAddress().withType("InternalIP").withAddress("198.18.0." + suffix).endAddress()
                .addNewAddress().withType("Hostname").withAddress(name).endAddress()
                .endStatus()
                .build();
    }

    /** The group's agent pod on {@code node}, once the DaemonSet controller created it and the scheduler bound it. */
    private static Pod agentPod(Cluster c, String node) {
        return await().atMost(WAIT).until(() -> admin().pods().inNamespace(c.namespace())
                .withLabel(AgentDaemonSetFactory.GROUP_LABEL, c.group()).list().getItems().stream()
                .filter(p -> node.equals(p.getSpec().getNodeName())).findFirst().orElse(null), p -> p != null);
    }

    /** One agent's AgentControl stream: what the controller sent, and the way to report. */
    private record Agent(BlockingQueue<ControllerMessage> received, StreamObserver<AgentMessage> requests) {

        ControllerMessage first() throws InterruptedException {
            return received.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
        }

        void reportArmed() {
            requests.onNext(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(true)
                    .setQuorumHeld(true).setExpected(2).setConfirmed(2).setQuorumSize(2)).build());
        }
    }

    /** The stream the agent pod on {@code node} opens: TLS with the chart's CA, its pod-bound token, a hello. */
    private Agent connectAgent(Cluster c, String node) throws IOException {
        Pod pod = agentPod(c, node);
        String token = KUBE.get().requestToken(c.namespace(), pod.getSpec().getServiceAccountName(),
                List.of("fencing-agent"), Duration.ofHours(1), pod.getMetadata().getName(),
                pod.getMetadata().getUid());
        // The agent trusts the CA the controller's Secret carries (ca.crt, as --agent-ca-secret hands it to agents)
        // and verifies the Service name the chart's certificate is issued for.
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", c.controller().grpcPort(),
                TlsChannelCredentials.newBuilder().trustManager(tlsDir.resolve("ca.crt").toFile()).build())
                .overrideAuthority(c.fullname() + "." + c.namespace() + ".svc").build();
        cleanup.add(() -> channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS));
        BlockingQueue<ControllerMessage> received = new LinkedBlockingQueue<>();
        StreamObserver<AgentMessage> requests = AgentControlGrpc.newStub(channel)
                .withCallCredentials(new BearerTokenCredentials(token))
                .connect(new StreamObserver<>() {
                    @Override
                    public void onNext(ControllerMessage value) {
                        received.add(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        // the test waits for messages; a refused stream shows as none arriving
                    }

                    @Override
                    public void onCompleted() {
                        // the controller ends streams only on refusal or shutdown; see onError
                    }
                });
        requests.onNext(AgentMessage.newBuilder().setHello(AgentHello.newBuilder().setNodeName(node)
                .setAgentVersion("chart-rbac-test")).build());
        return new Agent(received, requests);
    }

    @Test
    void theControllerDoesItsWholeJobWithTheChartsServiceAccountAndNoForbiddenAnswer() throws Exception {
        Cluster c = install((namespace, fullname) -> { });
        c.controller().start();
        String firstNode = c.nodes().get(0);

        Lease lease = await().atMost(WAIT).until(() -> admin().leases().inNamespace(c.namespace())
                .withName(c.fullname()).get(), l -> l != null && l.getSpec().getHolderIdentity() != null);
        assertThat(lease.getSpec().getHolderIdentity()).endsWith("@127.0.0.1:" + c.controller().grpcPort());
        DaemonSet daemonSet = await().atMost(WAIT).until(() -> admin().apps().daemonSets()
                .inNamespace(c.namespace()).withName("fencing-agent-" + c.group()).get(), d -> d != null);
        assertThat(daemonSet.getMetadata().getOwnerReferences()).singleElement()
                .satisfies(o -> assertThat(o.getName()).isEqualTo(c.group()));
        await().atMost(WAIT).until(() -> admin().secrets().inNamespace(c.namespace())
                .withName("fencing-gossip-" + c.group()).get() != null);
        await().atMost(WAIT).untilAsserted(() -> {
            NodeGroup g = admin().resources(NodeGroup.class).withName(c.group()).get();
            assertThat(g.getStatus()).isNotNull();
            assertThat(g.getStatus().getObservedGeneration()).isEqualTo(g.getMetadata().getGeneration());
            assertThat(g.getStatus().getExpected()).isEqualTo(2);
        });

        Agent agent = connectAgent(c, firstNode);
        ControllerMessage first = agent.first();
        assertThat(first).as("the agent's first message (refusals are logged by the controller)").isNotNull();
        assertThat(first.getFull().getNodeName()).isEqualTo(firstNode);
        assertThat(first.getFull().hasKeyring()).as("the gossip keyring, read from the Secret").isTrue();
        agent.reportArmed();

        await().atMost(WAIT).until(() -> admin().nodes().withName(firstNode).get().getMetadata().getLabels()
                .containsKey(NodeLabels.FENCING_ENABLED));
        List<Event> events = await().atMost(WAIT).until(() -> admin().v1().events().inNamespace("default")
                .withField("involvedObject.name", firstNode).list().getItems(), l -> l.stream()
                        .anyMatch(e -> e.getReason().equals("Armed")));
        assertThat(events).allSatisfy(e -> assertThat(e.getSource().getComponent()).isNotBlank());

        // A key rotation request while the agent DaemonSet differs from the controller's desired spec: the leader
        // updates the keyring Secret (phase 1) and the DaemonSet.
        String daemonSetName = daemonSet.getMetadata().getName();
        // Merge patches without a resourceVersion: the controllers update these objects concurrently.
        admin().apps().daemonSets().inNamespace(c.namespace()).withName(daemonSetName).patch(MERGE,
                "{\"metadata\":{\"annotations\":{\"" + AgentDaemonSetFactory.HASH_ANNOTATION + "\":\"stale\"}}}");
        admin().resources(NodeGroup.class).withName(c.group()).patch(MERGE,
                "{\"metadata\":{\"annotations\":{\"" + KeyRotationPlanner.ROTATE_ANNOTATION + "\":\"chart-rbac\"}}}");
        await().atMost(WAIT).until(() -> admin().secrets().inNamespace(c.namespace())
                .withName("fencing-gossip-" + c.group()).get().getMetadata().getAnnotations()
                .containsKey(KeyringState.PHASE_ANNOTATION));
        // A new leader holds back a change of the agents' pods until it may grant ControlPlane ties: the chart's
        // --max-tie-lease plus the lease duration (30 s + 15 s) from when it started leading.
        await().atMost(WAIT.plusSeconds(45)).until(() -> !"stale".equals(admin().apps().daemonSets()
                .inNamespace(c.namespace()).withName(daemonSetName).get().getMetadata().getAnnotations()
                .get(AgentDaemonSetFactory.HASH_ANNOTATION)));
        // Fencing switched off: the leader deletes the group's DaemonSet (the NodeGroup stays, so no GC does it).
        admin().resources(NodeGroup.class).withName(c.group()).patch(MERGE, "{\"spec\":{\"fencing\":null}}");
        await().atMost(WAIT).until(() -> admin().apps().daemonSets().inNamespace(c.namespace())
                .withName(daemonSetName).get() == null);

        ApiResponses api = c.controller().responses();
        assertThat(api.forbidden()).as("403 answers to the controller under the chart's RBAC; every answer that "
                + "was no success: " + api.failed()).isEmpty();
        // The job above really went through these (so a missing rule for any of them would have shown as a 403).
        assertThat(api.all()).anyMatch(a -> a.matches("201 POST /apis/authentication.k8s.io/v1/tokenreviews"))
                // --nodegroup-status=auto reads the NodeGroup CRD at start (the chart's own CRD keeps the status)
                .anyMatch(a -> a.equals("200 GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                        + "nodegroups.deckhouse.io"))
                .anyMatch(a -> a.matches("200 GET /api/v1/namespaces/" + c.namespace() + "/pods/.*"))
                // with server-side apply (the default) a create and an update are both an apply PATCH
                .anyMatch(a -> a.matches("201 (POST|PATCH) /apis/apps/v1/namespaces/" + c.namespace()
                        + "/daemonsets(/" + daemonSetName + ")?"))
                .anyMatch(a -> a.matches("200 (PUT|PATCH) /apis/apps/v1/namespaces/" + c.namespace() + "/daemonsets/"
                        + daemonSetName))
                .anyMatch(a -> a.equals("200 DELETE /apis/apps/v1/namespaces/" + c.namespace() + "/daemonsets/"
                        + daemonSetName))
                .anyMatch(a -> a.matches("201 POST /api/v1/namespaces/" + c.namespace() + "/secrets"))
                .anyMatch(a -> a.equals("200 PUT /api/v1/namespaces/" + c.namespace() + "/secrets/fencing-gossip-"
                        + c.group()))
                .anyMatch(a -> a.matches("20[01] (POST|PUT|PATCH) /apis/coordination.k8s.io/v1/namespaces/"
                        + c.namespace() + "/leases.*"))
                .anyMatch(a -> a.matches("200 (PUT|PATCH) /apis/deckhouse.io/v1/nodegroups/" + c.group() + "/status"))
                .anyMatch(a -> a.matches("200 PATCH /api/v1/nodes/" + firstNode))
                .anyMatch(a -> a.matches("201 POST /api/v1/namespaces/default/events"))
                .anyMatch(a -> a.matches("101 WATCH /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"));
    }

    /**
     * The "done when": a clean {@code helm install} with the default values (no --set at all) into a cluster
     * whose platform already owns the NodeGroup CRD, as Deckhouse does, brings up the controller, and the controller
     * (with the chart's identity and arguments) creates one agent DaemonSet per fencing-enabled group, none for a
     * group without fencing, and the DaemonSet controller admits the agent pods it stands for.
     */
    @Test
    void aCleanInstallWithDefaultValuesRunsOneAgentDaemonSetPerFencingGroup() throws Exception {
        try (InputStream in = Files.newInputStream(FencingChart.dir().resolve(
                "crds-optional/nodegroups.deckhouse.io-v1.yml"))) {
            admin().apiextensions().v1().customResourceDefinitions().resource(admin().getKubernetesSerialization()
                    .unmarshal(in, CustomResourceDefinition.class)).create();
        }
        ChartRelease.awaitCrdEstablished(admin());
        ChartRelease.awaitOwnerReferencesAdmitted(KUBE.get());
        ChartRelease release = new ChartRelease(KUBE.get(), KUBE.get().uniqueName("chart-defaults"));
        assertThat(release.install().getStatus()).isEqualTo("deployed");
        cleanup.add(release::uninstall);

        List<String> fenced = List.of(KUBE.get().uniqueName("workers"), KUBE.get().uniqueName("frontend"));
        String plain = KUBE.get().uniqueName("plain");
        List<String> nodes = new ArrayList<>();
        int suffix = 10;
        for (String group : List.of(fenced.get(0), fenced.get(1), plain)) {
            String node = group + "-1";
            admin().nodes().resource(node(node, group, suffix++)).create();
            nodes.add(node);
            NodeGroup g = new NodeGroup();
            g.setMetadata(new ObjectMetaBuilder().withName(group).build());
            g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(group.equals(plain) ? null
                    : new Fencing().withMode("Watchdog").withWatchdog(new FencingWatchdog().withTimeout("60s"))));
            admin().resource(g).create();
            cleanup.add(() -> admin().resources(NodeGroup.class).withName(group).delete());
        }
        cleanup.add(() -> nodes.forEach(n -> admin().nodes().withName(n).delete()));

        ChartController controller = ChartController.of(KUBE.get(), release.namespace(), DefaultValuesRenderTest.NAME,
                tlsDir);
        cleanup.add(controller);
        assertThat(controller.args()).contains("--gossip-port=9651", "--agent-metrics-port=9652");
        controller.start();

        for (String group : fenced) {
            DaemonSet ds = await().atMost(WAIT).until(() -> admin().apps().daemonSets()
                    .inNamespace(release.namespace()).withName(AgentDaemonSetFactory.name(group)).get(), d -> d != null);
            assertThat(ds.getMetadata().getOwnerReferences()).singleElement()
                    .satisfies(o -> assertThat(o.getName()).isEqualTo(group));
            var pod = ds.getSpec().getTemplate().getSpec();
            assertThat(pod.getContainers().get(0).getImage()).isEqualTo("ghcr.io/fencing/fencing-agent:0.1.0");
            assertThat(pod.getContainers().get(0).getImagePullPolicy()).isEqualTo("IfNotPresent");
            assertThat(pod.getContainers().get(0).getArgs()).containsSequence("--metrics-port", "9652");
            // The DaemonSet controller made the group's agent pod and the API server admitted it.
            Pod agent = agentPod(new Cluster(release.namespace(), DefaultValuesRenderTest.NAME, group, List.of(),
                    controller), group + "-1");
            assertThat(agent.getSpec().getInitContainers()).extracting(c -> c.getName())
                    .containsExactly("socket-link");
            // The leader writes the status after it created the DaemonSet: until then there is none to read.
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> assertThat(admin().resources(NodeGroup.class)
                    .withName(group).get().getStatus().getConditions()).anySatisfy(c -> {
                        assertThat(c.getType()).isEqualTo("AgentDaemonSet");
                        assertThat(c.getStatus()).isEqualTo("True");
                    }));
        }
        assertThat(admin().apps().daemonSets().inNamespace(release.namespace()).list().getItems())
                .extracting(d -> d.getMetadata().getName())
                .containsExactlyInAnyOrder(AgentDaemonSetFactory.name(fenced.get(0)),
                        AgentDaemonSetFactory.name(fenced.get(1)));
        assertThat(controller.responses().forbidden()).as("every answer that was no success: "
                + controller.responses().failed()).isEmpty();
    }

    /**
     * Where the platform owns the NodeGroup CRD and defines its status (as Deckhouse does: its own counters and
     * conditions without {@code reason}), the controller with the chart's default values and identity writes no
     * NodeGroup status but applies the group's status ConfigMap in the release namespace, and it goes with the group.
     */
    @Test
    void whereThePlatformDefinesTheStatusTheLeaderKeepsItInAConfigMapUnderTheChartsRbac() throws Exception {
        CustomResourceDefinition crd;
        try (InputStream in = Files.newInputStream(FencingChart.dir().resolve(
                "crds-optional/nodegroups.deckhouse.io-v1.yml"))) {
            crd = admin().getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
        }
        admin().apiextensions().v1().customResourceDefinitions().resource(PlatformDefinedStatus.apply(crd))
                .create();
        ChartRelease.awaitCrdEstablished(admin());
        ChartRelease.awaitOwnerReferencesAdmitted(KUBE.get());
        ChartRelease release = new ChartRelease(KUBE.get(), KUBE.get().uniqueName("chart-platform"));
        assertThat(release.install().getStatus()).isEqualTo("deployed");
        cleanup.add(release::uninstall);
        String group = KUBE.get().uniqueName("workers");
        String node = group + "-1";
        admin().nodes().resource(node(node, group, 21)).create();
        cleanup.add(() -> admin().nodes().withName(node).delete());
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName(group).build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing().withMode("Watchdog")
                .withWatchdog(new FencingWatchdog().withTimeout("60s"))));
        String uid = admin().resource(g).create().getMetadata().getUid();
        cleanup.add(() -> admin().resources(NodeGroup.class).withName(group).delete());

        ChartController controller = ChartController.of(KUBE.get(), release.namespace(), DefaultValuesRenderTest.NAME,
                tlsDir);
        cleanup.add(controller);
        controller.start();

        String name = GroupStatusStore.name(group);
        ConfigMap kept = await().atMost(WAIT).until(() -> admin().configMaps().inNamespace(release.namespace())
                .withName(name).get(), cm -> cm != null && GroupStatusStore.parse(cm,
                admin().getKubernetesSerialization()).getConditions().stream()
                .anyMatch(c -> "AgentDaemonSet".equals(c.getType()) && "True".equals(c.getStatus())));
        assertThat(GroupStatusStore.parse(kept, admin().getKubernetesSerialization()).getExpected()).isEqualTo(1);
        assertThat(kept.getMetadata().getOwnerReferences()).singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo(uid));
        assertThat(kept.getMetadata().getManagedFields()).singleElement().satisfies(f -> {
            assertThat(f.getManager()).isEqualTo(GroupStatusStore.FIELD_MANAGER);
            assertThat(f.getOperation()).isEqualTo("Apply");
        });
        ApiResponses api = controller.responses();
        assertThat(api.all()).noneMatch(a -> a.contains("/nodegroups/" + group + "/status"))
                .anyMatch(a -> a.matches("20[01] PATCH /api/v1/namespaces/" + release.namespace() + "/configmaps/"
                        + name))
                .anyMatch(a -> a.equals("200 GET /api/v1/namespaces/" + release.namespace() + "/configmaps"))
                .anyMatch(a -> a.equals("101 WATCH /api/v1/namespaces/" + release.namespace() + "/configmaps"));

        // The group deleted: the ConfigMap goes with it (the leader deletes it; the garbage collector would too).
        admin().resources(NodeGroup.class).withName(group).delete();
        await().atMost(WAIT).until(() -> admin().configMaps().inNamespace(release.namespace()).withName(name)
                .get() == null);
        assertThat(api.forbidden()).as("every answer that was no success: " + api.failed()).isEmpty();
    }

    @Test
    void aRuleCutFromTheInstalledClusterRoleFailsTheJobWithA403TheTestSees() throws Exception {
        // The chart's ClusterRole without "patch" on nodes: the controller can no longer label a Node.
        Cluster c = install((namespace, fullname) -> {
            ClusterRole chartRole = admin().rbac().clusterRoles().withName(fullname).get();
            assertThat(chartRole.getRules()).as("the chart grants patch on nodes before the cut")
                    .anyMatch(r -> r.getResources().contains("nodes") && r.getVerbs().contains("patch"));
            admin().rbac().clusterRoles().withName(fullname).edit(role -> {
                for (PolicyRule r : role.getRules()) {
                    if (r.getResources().contains("nodes")) {
                        r.setVerbs(r.getVerbs().stream().filter(v -> !v.equals("patch")).toList());
                    }
                }
                return role;
            });
        });
        c.controller().start();
        String firstNode = c.nodes().get(0);
        await().atMost(WAIT).until(() -> admin().secrets().inNamespace(c.namespace())
                .withName("fencing-gossip-" + c.group()).get() != null);

        Agent agent = connectAgent(c, firstNode);
        assertThat(agent.first()).isNotNull();
        agent.reportArmed();

        ApiResponses api = c.controller().responses();
        await().atMost(WAIT).until(() -> api.answered(403, "PATCH /api/v1/nodes/" + firstNode));
        assertThat(api.forbidden()).allMatch(a -> a.startsWith("403 PATCH /api/v1/nodes/"));
        assertThat(admin().nodes().withName(firstNode).get().getMetadata().getLabels())
                .doesNotContainKey(NodeLabels.FENCING_ENABLED);
    }

    @Test
    void aWatchCutFromTheInstalledRoleStopsTheControllerAtStartWithA403TheTestSees() throws Exception {
        // The chart's release-namespace Role without "watch" on Secrets: the keyring informer cannot run.
        Cluster c = install((namespace, fullname) -> {
            admin().rbac().roles().inNamespace(namespace).withName(fullname).edit(role -> {
                for (PolicyRule r : role.getRules()) {
                    if (r.getResources().contains("secrets")) {
                        r.setVerbs(r.getVerbs().stream().filter(v -> !v.equals("watch")).toList());
                    }
                }
                return role;
            });
        });

        assertThatThrownBy(() -> c.controller().start()).hasMessageContaining("403");

        assertThat(c.controller().responses().forbidden())
                .containsExactly("403 WATCH /api/v1/namespaces/" + c.namespace() + "/secrets");
    }
}
