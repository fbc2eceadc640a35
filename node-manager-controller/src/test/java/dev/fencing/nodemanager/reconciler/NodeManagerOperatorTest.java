package dev.fencing.nodemanager.reconciler;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.FencingWatchdog;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.grpc.TestAgent;
import dev.fencing.nodemanager.grpc.auth.TestAgentPods;
import dev.fencing.nodemanager.health.HealthServer;
import dev.fencing.nodemanager.model.GossipAddressAnnotation;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.nodemanager.view.GroupView;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ConfigDelta;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.Member;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import dev.fencing.proto.nodemanager.v1.TieBreakRequest;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@CrudMockClient
class NodeManagerOperatorTest {

    private static final String NS = "fencing-system";
    /** Short, so the first tie is granted a second after start (the wait-out of a previous leader's grant). */
    private static final Duration MAX_TIE_LEASE = Duration.ofSeconds(1);

    KubernetesMockServer server;
    KubernetesClient client;

    private NodeManager manager;
    private ManagedChannel channel;
    private TestAgentPods pods;
    private final List<TestAgent> agents = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        try (InputStream crd = getClass().getResourceAsStream("/META-INF/fabric8/nodegroups.deckhouse.io-v1.yml")) {
            client.apiextensions().v1().customResourceDefinitions()
                    .resource(client.getKubernetesSerialization().unmarshal(crd, CustomResourceDefinition.class))
                    .create();
        }
        startManager();
        pods = new TestAgentPods(server, client, NS);
    }

    private void startManager() throws IOException {
        ControllerConfig base = ControllerConfig.forTests(NS);
        ControllerConfig config = new ControllerConfig(base.namespace(), 0, 0, base.gossipPort(), base.agentImage(),
                base.agentControllerAddress(), base.agentResources(), base.agentTolerations(),
                base.agentPriorityClass(), false, base.leaseName(), null, null, Duration.ofMillis(500),
                Duration.ofSeconds(30), 4096, 4096, MAX_TIE_LEASE, 1, true, "127.0.0.1");
        manager = new NodeManager(client, config, InstantSource.system(),
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", manager.grpcPort()).usePlaintext().build();
    }

    /** Closes the agents' streams and the controller, and starts a new controller on the same API server. */
    private void restartManager() throws Exception {
        stopManager();
        startManager();
    }

    private void stopManager() throws Exception {
        agents.forEach(TestAgent::close);
        agents.clear();
        channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        manager.close();
    }

    @AfterEach
    void tearDown() throws Exception {
        agents.forEach(TestAgent::close);
        channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        manager.close();
    }

    private static NodeGroup group(String name, Fencing fencing) {
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName(name).build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(fencing));
        return g;
    }

    private static Fencing watchdog() {
        return new Fencing().withMode("Watchdog").withWatchdog(new FencingWatchdog().withTimeout("60s"));
    }

    private void createGroupWithNodes(String group, int n) {
        client.resource(group(group, watchdog())).create();
        for (int i = 1; i <= n; i++) {
            client.nodes().resource(node(group + "-" + i, group, i)).create();
        }
    }

    private TestAgent connect(String node) {
        TestAgent agent = await().atMost(10, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(100)).until(() -> {
            TestAgent a = TestAgent.connect(channel, node, pods.token(node));
            ControllerMessage first = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (first == null && !a.closed.isDone() && System.nanoTime() < deadline) {
                first = a.received.poll(20, TimeUnit.MILLISECONDS);
            }
            if (first == null) {
                a.close();
                return null;
            }
            a.received.add(first);
            return a;
        }, a -> a != null);
        agents.add(agent);
        return agent;
    }

    private ControllerMessage fullConfigWithMembers(TestAgent agent, int members) throws InterruptedException {
        ControllerMessage m = agent.next();
        assertThat(m.hasFull()).isTrue();
        // Nodes may still be arriving in the cache when the agent connects: apply deltas until the count is right.
        List<String> names = new ArrayList<>(m.getFull().getMembersList().stream().map(Member::getName).toList());
        ControllerMessage last = m;
        while (names.size() < members) {
            ControllerMessage d = agent.next();
            if (d.getDelta().hasMemberUpserted() && !names.contains(d.getDelta().getMemberUpserted().getName())) {
                names.add(d.getDelta().getMemberUpserted().getName());
            }
            last = d;
        }
        return last == m ? m : m.toBuilder().setRevision(last.getRevision()).build();
    }

    private Optional<Condition> condition(String group, String type) {
        NodeGroup g = client.resources(NodeGroup.class).withName(group).get();
        if (g == null || g.getStatus() == null || g.getStatus().getConditions() == null) {
            return Optional.empty();
        }
        return g.getStatus().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst();
    }

    // An AssertionError (retried by untilAsserted) rather than NoSuchElementException (which ends the wait at once).
    private static Condition present(Optional<Condition> condition) {
        assertThat(condition).as("condition written yet").isPresent();
        return condition.get();
    }

    private void report(TestAgent agent, boolean armed, boolean quorumHeld, int confirmed) {
        agent.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder()
                .setArmed(armed).setQuorumHeld(quorumHeld).setConfirmed(confirmed).setExpected(3).setQuorumSize(2)
                .setMode(FencingMode.FENCING_MODE_WATCHDOG)).build());
    }

    /**
     * The last report of a Node that was deleted goes once its agent's stream is gone (replaced machines no longer
     * pile up reports), not while the agent is still connected.
     */
    @Test
    void aDeletedNodesLastReportIsForgottenOnceItsAgentIsGone() throws Exception {
        createGroupWithNodes("workers", 3);
        TestAgent a = connect("workers-3");
        report(a, true, true, 3);
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.reports().latest("workers-3").isPresent());

        client.nodes().withName("workers-3").delete();
        await().during(1, TimeUnit.SECONDS).atMost(5, TimeUnit.SECONDS)
                .until(() -> manager.reports().latest("workers-3").isPresent());
        a.close();
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.reports().latest("workers-3").isEmpty());
        assertThat(manager.reports().isConnected("workers-3")).isFalse();
    }

    /**
     * Our out-of-service taint goes with the group's fencing: when the NodeGroup is deleted, and when a node leaves
     * every group (its group label removed). No group reconciles such a node any more, so nothing would remove the
     * taint once it is back and its workloads would stay away for good. Someone else's taint stays.
     */
    @Test
    void ourTaintIsReleasedWhenTheGroupIsDeletedOrTheNodeLeavesEveryGroup() throws Exception {
        createGroupWithNodes("workers", 3);
        java.util.function.Consumer<String> taintOurs = name -> client.nodes().withName(name).edit(n -> {
            n.setSpec(new io.fabric8.kubernetes.api.model.NodeSpec());
            n.getSpec().setTaints(List.of(new io.fabric8.kubernetes.api.model.TaintBuilder()
                    .withKey(dev.fencing.nodemanager.status.NodeFacts.OUT_OF_SERVICE_TAINT).withValue("nodeshutdown")
                    .withEffect("NoExecute").build()));
            n.getMetadata().setAnnotations(Map.of(dev.fencing.nodemanager.status.NodeFacts.TAINTED_BY_ANNOTATION,
                    dev.fencing.nodemanager.status.NodeFacts.TAINTED_BY));
            return n;
        });
        java.util.function.Predicate<String> tainted = name -> {
            Node n = client.nodes().withName(name).get();
            return n.getSpec() != null && n.getSpec().getTaints() != null && n.getSpec().getTaints().stream().anyMatch(t ->
                    dev.fencing.nodemanager.status.NodeFacts.OUT_OF_SERVICE_TAINT.equals(t.getKey()));
        };
        taintOurs.accept("workers-1");
        taintOurs.accept("workers-2");
        // workers-3 carries someone else's (no marker).
        client.nodes().withName("workers-3").edit(n -> {
            n.setSpec(new io.fabric8.kubernetes.api.model.NodeSpec());
            n.getSpec().setTaints(List.of(new io.fabric8.kubernetes.api.model.TaintBuilder()
                    .withKey(dev.fencing.nodemanager.status.NodeFacts.OUT_OF_SERVICE_TAINT).withValue("nodeshutdown")
                    .withEffect("NoExecute").build()));
            return n;
        });
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.distributor().ready("workers"));

        // workers-1 leaves every group.
        client.nodes().withName("workers-1").edit(n -> {
            Map<String, String> labels = new java.util.HashMap<>(n.getMetadata().getLabels());
            labels.remove(dev.fencing.nodemanager.model.NodeLabels.GROUP);
            n.getMetadata().setLabels(labels);
            return n;
        });
        await().atMost(10, TimeUnit.SECONDS).until(() -> !tainted.test("workers-1"));
        assertThat(tainted.test("workers-2")).isTrue();

        client.resources(NodeGroup.class).withName("workers").delete();
        await().atMost(10, TimeUnit.SECONDS).until(() -> !tainted.test("workers-2"));
        await().during(1, TimeUnit.SECONDS).atMost(3, TimeUnit.SECONDS).until(() -> tainted.test("workers-3"));
    }

    @Test
    void aFencingGroupGetsItsAgentDaemonSetAndAnAgentReceivesTheFullConfig() throws Exception {
        createGroupWithNodes("workers", 3);

        DaemonSet ds = await().atMost(10, TimeUnit.SECONDS).until(() ->
                client.apps().daemonSets().inNamespace(NS).withName("fencing-agent-workers").get(), d -> d != null);
        var pod = ds.getSpec().getTemplate().getSpec();
        assertThat(pod.getNodeSelector()).containsEntry(NodeLabels.GROUP, "workers");
        assertThat(pod.getHostNetwork()).isTrue();
        assertThat(pod.getContainers().get(0).getArgs())
                .containsExactly("run", "--controller", "node-manager-controller." + NS + ".svc:9650", "--node",
                        "$(NODE_NAME)", "--socket", "/var/run/fencing-agent/fencing-agent.sock",
                        "--watchdog-device", "/host/dev/watchdog", "--disk-root", "/host", "--metrics-port", "9652", "--probe-port", "9653",
                        "--token-file", "/etc/fencing-agent/token/token", "--insecure-plaintext");
        assertThat(pod.getVolumes()).filteredOn(v -> v.getHostPath() != null).extracting(v -> v.getHostPath().getPath())
                .contains("/dev", "/var/run/fencing-agent");
        assertThat(ds.getMetadata().getOwnerReferences()).extracting(o -> o.getKind()).containsExactly("NodeGroup");

        ControllerMessage full = connect("workers-2").next();
        assertThat(full.getFull().getGroup()).isEqualTo("workers");
        assertThat(full.getFull().getNodeName()).isEqualTo("workers-2");
        assertThat(full.getFull().getPolicy().getMode()).isEqualTo(FencingMode.FENCING_MODE_WATCHDOG);
        // APIReachable probes the API server this controller itself uses.
        assertThat(full.getFull().getApiServerProbe().getUrl() + "/")
                .isEqualTo(client.getConfiguration().getMasterUrl());
    }

    @Test
    void maintenanceReachesTheAgentAndMembershipChangesArriveAsDeltas() throws Exception {
        createGroupWithNodes("workers", 3);
        TestAgent agent = connect("workers-1");
        fullConfigWithMembers(agent, 3);
        agent.received.clear();

        long start = System.nanoTime();
        client.nodes().withName("workers-1").edit(n -> {
            n.getMetadata().getAnnotations().put("update.node.deckhouse.io/disruption-approved", "");
            return n;
        });
        // API write + informer + reconcile + gRPC delta: well under a second on an idle machine, but the bound
        // only has to catch "never arrives"; on a loaded CI machine the latency is printed, not asserted.
        ControllerMessage signal = await().atMost(10, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(10))
                .until(() -> agent.received.poll(), m -> m != null && m.getDelta().hasSignals());
        System.out.printf("maintenance signal reached the agent in %d ms%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        assertThat(signal.getDelta().getSignals().getMaintenance().getSource())
                .isEqualTo("update.node.deckhouse.io/disruption-approved");

        client.nodes().resource(node("workers-4", "workers", 4)).create();
        assertThat(nextDelta(agent, ConfigDelta.ChangeCase.MEMBER_UPSERTED).getDelta().getMemberUpserted().getName())
                .isEqualTo("workers-4");

        client.nodes().withName("workers-3").edit(n -> {
            n.getMetadata().getLabels().put(NodeLabels.GROUP, "elsewhere");
            return n;
        });
        assertThat(nextDelta(agent, ConfigDelta.ChangeCase.MEMBER_REMOVED).getDelta().getMemberRemoved())
                .isEqualTo("workers-3");

        client.nodes().withName("workers-4").delete();
        assertThat(nextDelta(agent, ConfigDelta.ChangeCase.MEMBER_REMOVED).getDelta().getMemberRemoved())
                .isEqualTo("workers-4");
    }

    @Test
    void anAgentsReportedNetworkAddressesReachItsPeersAsOneMemberDeltaAndOnlyInsideTheirNetworks() throws Exception {
        client.resource(group("multi", watchdog().withNetworks(List.of("198.18.0.0/24", "198.19.0.0/24"))
                .withReachability("All"))).create();
        for (int i = 1; i <= 3; i++) {
            client.nodes().resource(node("multi-" + i, "multi", i)).create();
        }
        TestAgent one = connect("multi-1");
        TestAgent two = connect("multi-2");
        ControllerMessage full = fullConfigWithMembers(two, 3);
        assertThat(full.getFull().getPolicy().getNetworksList()).containsExactly("198.18.0.0/24", "198.19.0.0/24");
        String port = full.getFull().getMembersList().get(0).getGossipAddress().replaceAll(".*:", "");
        two.received.clear();

        one.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setMode(FencingMode.FENCING_MODE_WATCHDOG)
                .putNetworkAddresses("198.18.0.0/24", "198.18.0.1")
                .putNetworkAddresses("198.19.0.0/24", "198.19.0.21")
                .putNetworkAddresses("10.9.0.0/16", "10.9.0.1")).build());
        Member upserted = nextDelta(two, ConfigDelta.ChangeCase.MEMBER_UPSERTED).getDelta().getMemberUpserted();
        assertThat(upserted.getName()).isEqualTo("multi-1");
        assertThat(upserted.getGossipAddressesMap()).isEqualTo(Map.of("198.18.0.0/24", "198.18.0.1:" + port,
                "198.19.0.0/24", "198.19.0.21:" + port));
    }

    @Test
    void theLeaderKeepsReportedNetworkAddressesOnTheNodeAndPeersGetThemFromThereBeforeAnyReport() throws Exception {
        String n1 = "198.18.0.0/24";
        String n2 = "198.19.0.0/24";
        client.resource(group("multi", watchdog().withNetworks(List.of(n1, n2)).withReachability("All"))).create();
        // multi-1's address on the second network is known from before (a restart, another replica's agent stream).
        Node annotated = node("multi-1", "multi", 1);
        annotated.getMetadata().setAnnotations(Map.of(GossipAddressAnnotation.KEY, n2 + "=198.19.0.21"));
        client.nodes().resource(annotated).create();
        for (int i = 2; i <= 3; i++) {
            client.nodes().resource(node("multi-" + i, "multi", i)).create();
        }
        TestAgent two = connect("multi-2");
        Map<String, Member> seen = new HashMap<>();
        await().atMost(5, TimeUnit.SECONDS).until(() -> {
            two.applyMemberChanges(seen);
            return seen.containsKey("multi-1") && !seen.get("multi-1").getGossipAddressesMap().isEmpty();
        });
        String port = seen.get("multi-1").getGossipAddress().replaceAll(".*:", "");
        assertThat(seen.get("multi-1").getGossipAddressesMap()).isEqualTo(Map.of(n2, "198.19.0.21:" + port));

        // Its agent now reports another address there: the leader rewrites the annotation (only the group's networks,
        // only IPs inside them) and the peers follow.
        TestAgent one = connect("multi-1");
        one.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setMode(FencingMode.FENCING_MODE_WATCHDOG)
                .putNetworkAddresses(n1, "198.18.0.1").putNetworkAddresses(n2, "198.19.0.33")
                .putNetworkAddresses("10.9.0.0/16", "10.9.0.1")).build());
        await().atMost(10, TimeUnit.SECONDS).until(() -> GossipAddressAnnotation.of(
                client.nodes().withName("multi-1").get()), v -> (n1 + "=198.18.0.1," + n2 + "=198.19.0.33").equals(v));
        await().atMost(5, TimeUnit.SECONDS).until(() -> {
            two.applyMemberChanges(seen);
            return ("198.19.0.33:" + port).equals(seen.get("multi-1").getGossipAddressesMap().get(n2));
        });

        // Someone else rewrites it: the leader puts back what the agent's latest report names, once its own write is
        // a label interval old (the cache is believed again then).
        client.nodes().withName("multi-1").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"annotations\":{\"" + GossipAddressAnnotation.KEY + "\":\"" + n2
                        + "=198.19.0.99\"}}}");
        await().atMost(15, TimeUnit.SECONDS).until(() -> GossipAddressAnnotation.of(
                client.nodes().withName("multi-1").get()), v -> (n1 + "=198.18.0.1," + n2 + "=198.19.0.33").equals(v));

        // A report naming no address (an agent before it knows its config) erases nothing: once the leader has acted
        // on it (the armed label), the annotation stays as it was.
        report(one, true, true, 3);
        await().atMost(10, TimeUnit.SECONDS).until(() -> client.nodes().withName("multi-1").get().getMetadata()
                .getLabels().containsKey(NodeLabels.FENCING_ENABLED));
        await().during(Duration.ofSeconds(1)).atMost(3, TimeUnit.SECONDS).until(() -> GossipAddressAnnotation.of(
                client.nodes().withName("multi-1").get()), v -> (n1 + "=198.18.0.1," + n2 + "=198.19.0.33").equals(v));

        // Fencing off: the annotation goes with the labels. JOSDK's status diff can be computed from a NodeGroup
        // the server has moved past (an array "remove" of an index that is gone); the mock now answers it with 422
        // as kube-apiserver does (AnsweringCrudDispatcher) and JOSDK retries from its fresher cache. The stock mock
        // left it unanswered: twice in CI the controller then sat out the client's 10 s timeouts past this wait.
        client.resources(NodeGroup.class).withName("multi").patch(PatchContext.of(PatchType.JSON),
                "[{\"op\":\"remove\",\"path\":\"/spec/fencing\"}]");
        await().atMost(30, TimeUnit.SECONDS).until(() -> GossipAddressAnnotation.of(
                client.nodes().withName("multi-1").get()) == null);
    }

    private static ControllerMessage nextDelta(TestAgent agent, ConfigDelta.ChangeCase kind) throws Exception {
        return await().atMost(5, TimeUnit.SECONDS).until(() -> agent.received.poll(100, TimeUnit.MILLISECONDS),
                m -> m != null && m.getDelta().getChangeCase() == kind);
    }

    @Test
    void reportsDriveStatusConditionsNodeLabelsAndEvents() throws Exception {
        createGroupWithNodes("workers", 3);
        List<TestAgent> three = List.of(connect("workers-1"), connect("workers-2"), connect("workers-3"));
        for (TestAgent a : three) {
            report(a, true, true, 3);
        }

        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            NodeGroup g = client.resources(NodeGroup.class).withName("workers").get();
            assertThat(g.getStatus().getExpected()).isEqualTo(3);
            assertThat(g.getStatus().getArmed()).isEqualTo(3);
            assertThat(g.getStatus().getHeard()).isEqualTo(3);
            assertThat(g.getStatus().getObservedGeneration()).isEqualTo(g.getMetadata().getGeneration());
            assertThat(g.getStatus().getTimings().getTStop()).isNotBlank();
            assertThat(condition("workers", "Ready")).get().extracting(Condition::getStatus).isEqualTo("True");
            assertThat(condition("workers", "QuorumHealthy")).get().extracting(Condition::getStatus)
                    .isEqualTo("True");
        });
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            Map<String, String> labels = client.nodes().withName("workers-2").get().getMetadata().getLabels();
            assertThat(labels).containsEntry(NodeLabels.FENCING_ENABLED, "")
                    .containsEntry(NodeLabels.FENCING_MODE, "Watchdog");
            assertThat(events("Armed")).hasSize(3);
        });

        report(three.get(0), true, false, 1);
        report(three.get(1), false, false, 1);
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            Condition q = present(condition("workers", "QuorumHealthy"));
            assertThat(q.getStatus()).isEqualTo("False");
            assertThat(q.getReason()).isEqualTo("QuorumLost");
            assertThat(q.getMessage()).contains("only 1 of 3").contains("workers-1").contains("workers-2");
            assertThat(events("QuorumLost")).hasSize(1);
            assertThat(events("Disarmed")).extracting(e -> e.getInvolvedObject().getName())
                    .containsExactly("workers-2");
            assertThat(client.nodes().withName("workers-2").get().getMetadata().getLabels())
                    .doesNotContainKey(NodeLabels.FENCING_ENABLED);
        });

        report(three.get(0), true, true, 3);
        report(three.get(1), true, true, 3);
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(events("QuorumRecovered")).hasSize(1));
    }

    private List<Event> events(String reason) {
        return client.v1().events().inNamespace("default").list().getItems().stream()
                .filter(e -> reason.equals(e.getReason())).toList();
    }

    @Test
    void switchingFencingOffRemovesTheDaemonSetAndEndsAgentStreams() throws Exception {
        createGroupWithNodes("workers", 2);
        await().atMost(10, TimeUnit.SECONDS).until(() ->
                client.apps().daemonSets().inNamespace(NS).withName("fencing-agent-workers").get() != null);
        TestAgent agent = connect("workers-1");

        client.resources(NodeGroup.class).withName("workers").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"spec\":{\"fencing\":null}}");

        await().atMost(10, TimeUnit.SECONDS).until(() ->
                client.apps().daemonSets().inNamespace(NS).withName("fencing-agent-workers").get() == null);
        assertThat(agent.closed.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() ->
                assertThat(condition("workers", "Ready")).get().extracting(Condition::getReason)
                        .isEqualTo("FencingDisabled"));
    }

    @Test
    void aGroupWithoutFencingGetsNeitherDaemonSetNorStatus() {
        client.resource(group("plain", null)).create();
        client.nodes().resource(node("plain-1", "plain", 1)).create();
        createGroupWithNodes("workers", 1);
        await().atMost(10, TimeUnit.SECONDS).until(() ->
                client.apps().daemonSets().inNamespace(NS).withName("fencing-agent-workers").get() != null);
        await().during(1, TimeUnit.SECONDS).atMost(3, TimeUnit.SECONDS).until(() ->
                client.resources(NodeGroup.class).withName("plain").get().getStatus() == null
                        && client.apps().daemonSets().inNamespace(NS).withName("fencing-agent-plain").get() == null);
    }

    @Test
    void agentsGetTheGroupsGossipKeyringAndItsRotationAsADelta() throws Exception {
        createGroupWithNodes("workers", 2);
        TestAgent agent = connect("workers-1");
        ControllerMessage full = agent.next();
        com.google.protobuf.ByteString primary = full.getFull().getKeyring().getPrimary();
        assertThat(primary.size()).isEqualTo(32);
        io.fabric8.kubernetes.api.model.Secret secret = client.secrets().inNamespace(NS)
                .withName("fencing-gossip-workers").get();
        assertThat(java.util.Base64.getDecoder().decode(secret.getData().get("primary"))).isEqualTo(primary.toByteArray());

        // A malformed edit is not applied: agents keep the keyring they have.
        client.secrets().inNamespace(NS).withName("fencing-gossip-workers").edit(s -> {
            s.getData().put("secondary-0", "dG9vIHNob3J0");
            return s;
        });
        byte[] next = new byte[32];
        next[0] = 7;
        client.secrets().inNamespace(NS).withName("fencing-gossip-workers").edit(s -> {
            s.getData().put("secondary-0", s.getData().get("primary"));
            s.getData().put("primary", java.util.Base64.getEncoder().encodeToString(next));
            return s;
        });
        ControllerMessage rotated = nextDelta(agent, ConfigDelta.ChangeCase.KEYRING);
        assertThat(rotated.getDelta().getKeyring().getPrimary().toByteArray()).isEqualTo(next);
        assertThat(rotated.getDelta().getKeyring().getSecondaryList()).containsExactly(primary);
    }

    @Test
    void aForeignAgentDaemonSetIsLeftAloneWithANotOwnedConditionUntilItIsGoneThenTheGroupGetsItsOwn() {
        // Deckhouse's own agent for the group: a DaemonSet of the same name that no NodeGroup controls.
        DaemonSet foreign = new DaemonSetBuilder()
                .withNewMetadata().withName("fencing-agent-workers").withNamespace(NS)
                    .addToLabels("heritage", "deckhouse").endMetadata()
                .withNewSpec().withNewSelector().addToMatchLabels("app", "deckhouse-agent").endSelector()
                    .withNewTemplate().withNewMetadata().addToLabels("app", "deckhouse-agent").endMetadata()
                        .withNewSpec().addNewContainer().withName("agent").withImage("deckhouse/agent:1")
                        .endContainer().endSpec()
                    .endTemplate().endSpec()
                .build();
        String foreignVersion = client.apps().daemonSets().inNamespace(NS).resource(foreign).create().getMetadata()
                .getResourceVersion();
        createGroupWithNodes("workers", 2);

        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            Condition c = present(condition("workers", "AgentDaemonSet"));
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getReason()).isEqualTo("NotOwned");
            assertThat(c.getMessage()).contains(NS + "/fencing-agent-workers", "heritage=deckhouse");
        });
        await().atMost(10, TimeUnit.SECONDS).until(() -> events("AgentDaemonSetNotOwned").size() == 1);
        assertThat(events("AgentDaemonSetNotOwned").get(0).getType()).isEqualTo("Warning");
        // Several reconciles later (status every 500 ms) it is still untouched and announced once.
        await().during(1500, TimeUnit.MILLISECONDS).atMost(5, TimeUnit.SECONDS).until(() -> client.apps()
                .daemonSets().inNamespace(NS).withName("fencing-agent-workers").get().getMetadata()
                .getResourceVersion().equals(foreignVersion));
        assertThat(events("AgentDaemonSetNotOwned")).hasSize(1);

        client.apps().daemonSets().inNamespace(NS).withName("fencing-agent-workers").delete();

        DaemonSet own = await().atMost(10, TimeUnit.SECONDS).until(() -> client.apps().daemonSets()
                .inNamespace(NS).withName("fencing-agent-workers").get(), d -> d != null
                        && d.getMetadata().getOwnerReferences() != null
                        && !d.getMetadata().getOwnerReferences().isEmpty());
        assertThat(own.getMetadata().getOwnerReferences()).singleElement()
                .satisfies(o -> assertThat(o.getName()).isEqualTo("workers"));
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            Condition c = present(condition("workers", "AgentDaemonSet"));
            assertThat(c.getStatus()).isEqualTo("True");
            assertThat(c.getReason()).isEqualTo("Applied");
        });
    }

    @Test
    void deletingTheGroupDeletesItsDaemonSet() {
        createGroupWithNodes("workers", 2);
        await().atMost(10, TimeUnit.SECONDS).until(() ->
                client.apps().daemonSets().inNamespace(NS).withName("fencing-agent-workers").get() != null);
        client.resources(NodeGroup.class).withName("workers").delete();
        await().atMost(10, TimeUnit.SECONDS).until(() ->
                client.apps().daemonSets().inNamespace(NS).withName("fencing-agent-workers").get() == null);
    }

    @Test
    void anInvalidSpecIsAFalseReadyConditionNamingTheField() throws Exception {
        client.resource(group("broken", new Fencing().withMode("Notify").withQuorumLossAction("Fence"))).create();
        client.nodes().resource(node("broken-1", "broken", 1)).create();

        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            Condition ready = present(condition("broken", "Ready"));
            assertThat(ready.getStatus()).isEqualTo("False");
            assertThat(ready.getReason()).isEqualTo("InvalidSpec");
            assertThat(ready.getMessage()).contains("spec.fencing.quorumLossAction");
        });
        TestAgent refused = TestAgent.connect(channel, "broken-1", pods.token("broken-1"));
        agents.add(refused);
        Status status = refused.closed.get(5, TimeUnit.SECONDS);
        assertThat(status.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(status.getDescription()).contains("spec.fencing.quorumLossAction");
    }

    /**
     * A controller that starts while a group's spec is invalid (an upgrade, a rescheduled pod) serves its agents the
     * policy and members the last controller served, kept in the ConfigMap fencing-config-<group> with the
     * generation it was written at, instead of nothing: they keep their tie-breaks, maintenance and removal
     * signals. A ConfigMap from before the spec last changed (the spec edited while no controller ran, a version
     * rolled back to) is not served until it carries the current generation; switching fencing off deletes it.
     */
    @Test
    void aControllerStartedWhileTheSpecIsInvalidServesThePolicyAndMembersServedBefore() throws Exception {
        // Nodes first: the first pair kept has all three (a later member change waits for the write interval).
        for (int i = 1; i <= 3; i++) {
            client.nodes().resource(node("workers-" + i, "workers", i)).create();
        }
        client.resource(group("workers", watchdog())).create();
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.distributor().lastValid("workers")
                .filter(c -> c.config().getMembersCount() == 3).isPresent());
        dev.fencing.proto.nodemanager.v1.GroupConfig served = manager.distributor().lastValid("workers").orElseThrow()
                .config();
        assertThat(served.getPolicy().getQuorumSize()).isEqualTo(2);
        awaitKept(served);
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() ->
                assertThat(metrics()).contains("fencing_controller_group_spec_invalid{group=\"workers\"} 0.0"));

        setFencing(new Fencing().withMode("Notify").withQuorumLossAction("Fence"));
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() ->
                assertThat(present(condition("workers", "Ready")).getReason()).isEqualTo("InvalidSpec"));
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() ->
                assertThat(metrics()).contains("fencing_controller_group_spec_invalid{group=\"workers\"} 1.0"));
        // Stamped with the invalid spec's generation, still the pair served before.
        awaitKept(served);
        // Meanwhile a node joins and workers-2 goes into maintenance.
        client.nodes().resource(node("workers-4", "workers", 4)).create();
        client.nodes().withName("workers-2").edit(n -> {
            n.getMetadata().setAnnotations(Map.of(NodeLabels.MAINTENANCE_ANNOTATIONS.get(0), "true"));
            return n;
        });

        restartManager();
        ControllerMessage again = connect("workers-2").next();
        assertThat(again.getFull().getPolicy()).isEqualTo(served.getPolicy());
        assertThat(again.getFull().getMembersList()).isEqualTo(served.getMembersList());
        assertThat(again.getFull().getSignals().hasMaintenance()).as("signals follow the cluster").isTrue();

        // The spec edited while no controller runs: what was kept predates it and is not served...
        stopManager();
        setFencing(new Fencing().withMode("Notify").withQuorumLossAction("Fence")
                .withWatchdog(new FencingWatchdog().withTimeout("60s")));
        startManager();
        TestAgent refused = TestAgent.connect(channel, "workers-1", pods.token("workers-1"));
        agents.add(refused);
        Status status = refused.closed.get(5, TimeUnit.SECONDS);
        assertThat(status.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(status.getDescription()).contains("invalid spec.fencing");
        // ...until it carries the current generation (as the leader would write it): the replica picks it up.
        long generation = client.resources(NodeGroup.class).withName("workers").get().getMetadata().getGeneration();
        String map = dev.fencing.nodemanager.status.LastValidConfigStore.name("workers");
        client.configMaps().inNamespace(NS).withName(map).edit(cm -> {
            cm.getData().put(dev.fencing.nodemanager.status.LastValidConfigStore.GENERATION_KEY,
                    Long.toString(generation));
            return cm;
        });
        assertThat(connect("workers-1").next().getFull().getMembersList()).isEqualTo(served.getMembersList());

        // Switching fencing off deletes what is kept.
        setFencing(null);
        await().atMost(10, TimeUnit.SECONDS).until(() ->
                client.configMaps().inNamespace(NS).withName(map).get() == null);
    }

    private void setFencing(Fencing fencing) {
        NodeGroup g = client.resources(NodeGroup.class).withName("workers").get();
        g.getSpec().setFencing(fencing);
        client.resource(g).update();
    }

    // The group's fencing-config ConfigMap holds `served` at the NodeGroup's current generation.
    private void awaitKept(dev.fencing.proto.nodemanager.v1.GroupConfig served) {
        await().atMost(15, TimeUnit.SECONDS).untilAsserted(() -> {
            NodeGroup g = client.resources(NodeGroup.class).withName("workers").get();
            io.fabric8.kubernetes.api.model.ConfigMap cm = client.configMaps().inNamespace(NS)
                    .withName(dev.fencing.nodemanager.status.LastValidConfigStore.name("workers")).get();
            assertThat(cm).isNotNull();
            dev.fencing.nodemanager.status.LastValidConfigStore.Kept kept =
                    dev.fencing.nodemanager.status.LastValidConfigStore.parse(cm, "workers");
            assertThat(kept.generation()).isEqualTo(g.getMetadata().getGeneration());
            assertThat(kept.config()).isEqualTo(served.toBuilder().clearNodeName().clearSignals().clearKeyring()
                    .clearApiServerProbe().build());
        });
    }

    private String metrics() throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + manager.healthPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void healthReadinessAndMetricsAreServed() throws Exception {
        createGroupWithNodes("workers", 1);
        connect("workers-1");
        HttpClient http = HttpClient.newHttpClient();
        String base = "http://127.0.0.1:" + manager.healthPort();
        await().atMost(10, TimeUnit.SECONDS).until(() -> http.send(HttpRequest.newBuilder(URI.create(base
                + "/readyz")).build(), HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
        assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "/healthz")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            String metrics = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertThat(metrics).contains("fencing_controller_connected_agents{group=\"workers\"} 1.0")
                    .contains("fencing_controller_stream_queue_depth_messages")
                    .contains("fencing_controller_config_revision_lag_max")
                    .contains("operator_sdk_reconciliations")
                    .contains("fencing_build_info{component=\"controller\",version=\"dev\"} 1")
                    .contains("jvm_memory_used_bytes", "jvm_gc_", "jvm_threads_live_threads", "jvm_classes_loaded",
                            "process_cpu_usage", "process_uptime_seconds", "process_files_open_files");
        });
    }

    /**
     * Connections that send half a request (twice the health port's cap of them) no longer hold the health port,
     * whose JDK server once gave two of them its request threads and then answered nobody: scrapes and the kubelet's
     * probes are answered all the same, the probes with the reason when they fail.
     */
    @Test
    void clientsHoldingConnectionsKeepNeitherTheHealthNorTheProbePortFromAnswering() throws Exception {
        createGroupWithNodes("workers", 1);
        connect("workers-1");
        int probePort = manager.serveProbes(0);
        assertThatThrownBy(() -> manager.serveProbes(0)).isInstanceOf(IllegalStateException.class);
        await().atMost(10, TimeUnit.SECONDS).until(() -> rawGet(probePort, "/readyz", 5_000).startsWith("HTTP/1.1 200 "));
        List<Socket> holders = new ArrayList<>();
        try {
            for (int i = 0; i < 2 * HealthServer.MAX_CONNECTIONS; i++) {
                Socket s = new Socket("127.0.0.1", manager.healthPort());
                s.getOutputStream().write("GET /healthz HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
                holders.add(s);
                Socket p = new Socket("127.0.0.1", probePort);
                p.getOutputStream().write("GET /healthz HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
                holders.add(p);
            }
            assertThat(rawGet(manager.healthPort(), "/healthz", 5_000)).startsWith("HTTP/1.1 200 ").endsWith("ok\n");
            assertThat(rawGet(manager.healthPort(), "/metrics", 5_000)).startsWith("HTTP/1.1 200 ")
                    .contains("fencing_controller_connected_agents");
            assertThat(rawGet(probePort, "/healthz", 5_000)).startsWith("HTTP/1.1 200 ").endsWith("ok\n");
            assertThat(rawGet(probePort, "/readyz", 5_000)).startsWith("HTTP/1.1 200 ");
        } finally {
            for (Socket s : holders) {
                s.close();
            }
        }
        assertThat(manager.livenessProblem()).isEmpty();
        assertThat(manager.readinessProblem()).isEmpty();
    }

    private static String rawGet(int port, String path, int timeoutMillis) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(timeoutMillis);
            s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void perGroupGaugesCountTheGroupsViewAndVanishWhenTheGroupIsDeleted() throws Exception {
        createGroupWithNodes("workers", 3);
        TestAgent one = connect("workers-1");
        one.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(true).setQuorumHeld(true)
                .setConfirmed(2).setExpected(3).setQuorumSize(2).setMode(FencingMode.FENCING_MODE_WATCHDOG)).build());
        HttpClient http = HttpClient.newHttpClient();
        URI metricsUri = URI.create("http://127.0.0.1:" + manager.healthPort() + "/metrics");
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(http.send(
                HttpRequest.newBuilder(metricsUri).build(), HttpResponse.BodyHandlers.ofString()).body())
                .contains("fencing_controller_leader 1.0",
                        "fencing_controller_group_expected_nodes{group=\"workers\"} 3.0",
                        "fencing_controller_group_quorum_size_nodes{group=\"workers\"} 2.0",
                        "fencing_controller_group_reporting_nodes{group=\"workers\"} 1.0",
                        "fencing_controller_group_armed_nodes{group=\"workers\"} 1.0",
                        "fencing_controller_group_quorum_held_nodes{group=\"workers\"} 1.0",
                        "fencing_controller_group_fenced_nodes{group=\"workers\"} 0.0",
                        "fencing_controller_group_out_of_service_nodes{group=\"workers\"} 0.0",
                        "fencing_controller_tie_grants_total{group=\"workers\"} 0.0",
                        "fencing_controller_connected_agents{group=\"workers\"} 1.0"));

        client.resources(NodeGroup.class).withName("workers").delete();
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(http.send(
                HttpRequest.newBuilder(metricsUri).build(), HttpResponse.BodyHandlers.ofString()).body())
                .doesNotContain("group=\"workers\"").contains("fencing_controller_leader 1.0"));
    }

    @Test
    void aControlPlaneTieGrantCountsForItsGroupOnlyAndItsSeriesGoesWithTheGroup() throws Exception {
        createGroupWithNodes("pair", 2);
        createGroupWithNodes("trio", 3);
        TestAgent one = connect("pair-1");
        HttpClient http = HttpClient.newHttpClient();
        URI metricsUri = URI.create("http://127.0.0.1:" + manager.healthPort() + "/metrics");
        // Refused while the arbiter waits out a previous leader's grant (MAX_TIE_LEASE); asked again until granted.
        long[] requestId = {0};
        ControllerMessage answer = await().atMost(10, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    one.send(AgentMessage.newBuilder().setTieBreakRequest(TieBreakRequest.newBuilder()
                            .setRequestId(++requestId[0]).addSide("pair-1")).build());
                    ControllerMessage m;
                    do {
                        m = one.received.poll(2, TimeUnit.SECONDS);
                    } while (m != null && !m.hasTieBreak());
                    return m;
                }, m -> m != null && m.getTieBreak().getGranted());
        assertThat(answer.getTieBreak().getReason()).isEqualTo("granted");
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(http.send(
                HttpRequest.newBuilder(metricsUri).build(), HttpResponse.BodyHandlers.ofString()).body())
                .contains("fencing_controller_tie_grants_total{group=\"pair\"} 1.0",
                        "fencing_controller_tie_grants_total{group=\"trio\"} 0.0"));

        client.resources(NodeGroup.class).withName("pair").delete();
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(http.send(
                HttpRequest.newBuilder(metricsUri).build(), HttpResponse.BodyHandlers.ofString()).body())
                .doesNotContain("group=\"pair\"")
                .contains("fencing_controller_tie_grants_total{group=\"trio\"} 0.0"));
    }

    @Test
    void theGroupViewEndpointShowsEachAgentsArmedStateQuorumAndHeardRowFromItsReports() throws Exception {
        createGroupWithNodes("workers", 3);
        List<TestAgent> three = List.of(connect("workers-1"), connect("workers-2"), connect("workers-3"));
        // workers-3 is cut off: the other two confirm each other only, and it confirms no one.
        for (int i = 0; i < 2; i++) {
            three.get(i).send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(true)
                    .setQuorumHeld(true).setConfirmed(2).setExpected(3).setQuorumSize(2)
                    .setMode(FencingMode.FENCING_MODE_WATCHDOG)
                    .addPeers(PeerReport.newBuilder().setName(i == 0 ? "workers-2" : "workers-1").setConfirmed(true))
                    .addPeers(PeerReport.newBuilder().setName("workers-3").setConfirmed(false))).build());
        }
        three.get(2).send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(false)
                .setQuorumHeld(false).setConfirmed(1).setExpected(3).setQuorumSize(2)
                .setMode(FencingMode.FENCING_MODE_WATCHDOG)).build());

        HttpClient http = HttpClient.newHttpClient();
        String base = "http://127.0.0.1:" + manager.healthPort() + "/debug/groups/";
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "workers")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("Content-Type")).contains("application/json");
            GroupView view = client.getKubernetesSerialization().unmarshal(r.body(), GroupView.class);
            assertThat(view.group()).isEqualTo("workers");
            assertThat(view.leader()).isTrue();
            assertThat(view.quorumSize()).isEqualTo(2);
            assertThat(view.members()).containsExactly("workers-1", "workers-2", "workers-3");
            assertThat(view.nodes()).extracting(GroupView.NodeRow::heard).containsExactly("=+-", "+=-", "--=");
            assertThat(view.nodes()).extracting(GroupView.NodeRow::armed).containsExactly(true, true, false);
            assertThat(view.nodes()).extracting(GroupView.NodeRow::quorumHeld).containsExactly(true, true, false);
            assertThat(view.nodes().get(2).notConfirmed()).containsExactly("workers-1", "workers-2");
            assertThat(view.nodes()).allSatisfy(n -> assertThat(n.lastContact()).isNotNull());
        });
        assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "nosuchgroup")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(404);
        HttpResponse<String> bad = http.send(HttpRequest.newBuilder(URI.create(base + "Bad_Name")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("not a NodeGroup name");
        assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "workers"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString())
                .statusCode()).isEqualTo(405);
    }
}
