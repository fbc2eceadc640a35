package dev.fencing.nodemanager.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.FencedNode;
import dev.fencing.api.v1.FencingStorm;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupFencing;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.grpc.TestAgent;
import dev.fencing.nodemanager.grpc.TestReports;
import dev.fencing.nodemanager.grpc.auth.TestAgentPods;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.model.TestNodes;
import dev.fencing.nodemanager.storm.StormLimitCondition;
import dev.fencing.nodemanager.peervote.PeersReachable;
import dev.fencing.nodemanager.rbac.ApiCallRecorder;
import dev.fencing.nodemanager.status.GroupStatusStore;
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.nodemanager.testing.NodeGroupCrds;
import dev.fencing.policy.DurationFormat;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.policy.ResolvedTimings;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the controller does when nodes of a group fail, on the CRUD mock with a real controller and real agent
 * streams, on a controllable wall clock. Storm limits: a group in which half the nodes fail at once fences nobody
 * and says why; one node failing alone is tainted; a second failure waits for the first fencing. After a fence: a
 * CloudEphemeral node is deleted instead of tainted. Peers' vote: a node the control plane lost while its peers
 * still hear it carries {@code FencingPeersReachable=True}.
 */
@CrudMockClient
class GroupFailureOperatorTest {

    KubernetesClient client;
    KubernetesMockServer server;
    private TestAgentPods pods;
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-23T10:00:00Z"));
    private final Map<String, TestAgent> agents = new LinkedHashMap<>();
    // Agents whose streams ended: they send nothing more.
    private final Set<String> silent = new java.util.HashSet<>();
    // Every node of the group, whether its agent is connected or not.
    private final Set<String> members = new java.util.TreeSet<>();
    private NodeManager manager;
    private ManagedChannel channel;
    private Duration delay;
    private Duration window;
    private ControllerConfig config;
    private Instant lastContact;
    // The NodeGroup CRD the test installs; the platform's makes the controller keep status in a ConfigMap.
    private boolean platformCrd;
    // Set: the controller's calls are recorded and checked against the chart's RBAC at the end.
    private ApiCallRecorder recorder;
    private KubernetesClient controllerClient;

    @AfterEach
    void tearDown() throws Exception {
        agents.values().forEach(TestAgent::close);
        if (channel != null) {
            channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        }
        if (manager != null) {
            manager.close();
        }
        if (controllerClient != null) {
            controllerClient.close();
        }
        if (recorder != null) {
            recorder.assertChartAllowsEveryCall("ns");
        }
    }

    private static String name(int i) {
        return "workers-" + i;
    }

    /** A group of {@code size}, every agent armed and reporting, every kubelet renewing and Ready. */
    private void startArmedGroup(int size, NodeType type, FencingStorm storm, int maxOutOfService) throws Exception {
        if (platformCrd) {
            client.apiextensions().v1().customResourceDefinitions()
                    .resource(NodeGroupCrds.platformDefined(client)).create();
        } else {
            NodeGroupCrds.install(client);
        }
        ControllerConfig b = ControllerConfig.forTests("ns");
        config = new ControllerConfig("ns", 0, -1, 7946, b.agentImage(), b.agentControllerAddress(),
                b.agentResources(), b.agentTolerations(), b.agentPriorityClass(), false, "l", null, null,
                Duration.ofMillis(300), Duration.ofSeconds(30), 100, 100, Duration.ofSeconds(30), maxOutOfService,
                true, "127.0.0.1");
        pods = new TestAgentPods(server, client, "ns");
        startController();
        NodeGroup group = new NodeGroup();
        group.setMetadata(new ObjectMetaBuilder().withName("workers").build());
        Fencing fencing = new Fencing().withMode("Watchdog").withQuorumLossAction("Fence").withStorm(storm);
        group.setSpec(new NodeGroupSpec().withNodeType(type).withFencing(fencing));
        client.resource(group).create();
        for (int i = 1; i <= size; i++) {
            client.nodes().resource(new NodeBuilder(TestNodes.node(name(i), "workers", i)).editStatus()
                    .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build())
                    .create();
            kubeletRenewed(name(i), now.get());
        }
        ResolvedTimings timings = PolicyResolver.resolve(NodeGroupFencing.toFencingSpec(group), size).timings();
        delay = timings.safeToAssumeFencedDelay();
        window = timings.quorumWindow();
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.distributor().ready("workers"));
        for (int i = 1; i <= size; i++) {
            members.add(name(i));
            connect(name(i));
        }
        reportAll(Set.of());
        await().atMost(10, TimeUnit.SECONDS).until(() -> agents.keySet().stream().allMatch(n -> client.nodes()
                .withName(n).get().getMetadata().getLabels().containsKey(NodeLabels.FENCING_ENABLED)));
        lastContact = now.get();
    }

    private void startController() throws java.io.IOException {
        manager = new NodeManager(controllerClient != null ? controllerClient : client, config, now::get,
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", manager.grpcPort()).usePlaintext().build();
    }

    /** The controller process goes; a new one (no memory of the last) takes over and {@code reconnecting} connect. */
    private void newLeader(java.util.Collection<String> reconnecting) throws Exception {
        agents.values().forEach(TestAgent::close);
        channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        manager.close();
        agents.clear();
        startController();
        for (String n : reconnecting) {
            connect(n);
        }
    }

    private void connect(String node) throws InterruptedException {
        TestAgent a = TestAgent.connect(channel, node, pods.token(node));
        ControllerMessage first = a.next();
        assertThat(first.hasFull()).isTrue();
        agents.put(node, a);
    }

    private void kubeletRenewed(String node, Instant at) {
        KubeletLeases.renewed(client, manager, node, at);
    }

    /** Every agent not in {@code failed} reports armed and quorum held, hearing everyone but {@code failed}. */
    private void reportAll(Set<String> failed) {
        Duration unheard = lastContact == null ? Duration.ZERO : Duration.between(lastContact, now.get());
        agents.forEach((n, a) -> {
            if (!failed.contains(n) && !silent.contains(n)) {
                a.send(TestReports.armedHearing(n, members, failed, unheard));
            }
        });
    }

    /** {@code failed} go silent and NotReady (their kubelets stop); the others keep renewing. */
    private void fail(Set<String> failed) {
        for (String n : failed) {
            silent.add(n);
            agents.get(n).close();
            client.nodes().withName(n).editStatus(node -> new NodeBuilder(node).editStatus().editMatchingCondition(
                    c -> "Ready".equals(c.getType())).withStatus("False").endCondition().endStatus().build());
        }
    }

    /** The clock passes the safe-to-assume-fenced delay; the healthy report again, the kubelets renew. */
    private void pastTheSafeDelay(Set<String> failed) {
        now.set(lastContact.plus(delay).plusSeconds(1));
        for (String n : agents.keySet()) {
            if (!failed.contains(n)) {
                kubeletRenewed(n, now.get());
            }
        }
        reportAll(failed);
    }

    private NodeGroup group() {
        return client.resources(NodeGroup.class).withName("workers").get();
    }

    /** The status the leader keeps: the NodeGroup's, or with the platform's CRD its ConfigMap's. */
    private NodeGroupStatus keptStatus() {
        if (platformCrd) {
            ConfigMap cm = client.configMaps().inNamespace("ns").withName(GroupStatusStore.name("workers")).get();
            return cm == null ? null : GroupStatusStore.parse(cm, client.getKubernetesSerialization());
        }
        NodeGroup g = group();
        return g == null ? null : g.getStatus();
    }

    private Condition stormCondition() {
        NodeGroupStatus s = keptStatus();
        if (s == null || s.getConditions() == null) {
            return null;
        }
        return s.getConditions().stream().filter(c -> StormLimitCondition.TYPE.equals(c.getType()))
                .findFirst().orElse(null);
    }

    private Set<String> tainted() {
        Set<String> out = new TreeSet<>();
        for (Node n : client.nodes().list().getItems()) {
            if (n.getSpec() != null && n.getSpec().getTaints() != null && n.getSpec().getTaints().stream()
                    .anyMatch(t -> "node.kubernetes.io/out-of-service".equals(t.getKey()))) {
                out.add(n.getMetadata().getName());
            }
        }
        return out;
    }

    private List<String> fencedNodes() {
        NodeGroupStatus s = keptStatus();
        return s == null || s.getFencedNodes() == null ? List.of()
                : s.getFencedNodes().stream().map(FencedNode::getName).toList();
    }

    private List<Event> events(String reason) {
        return client.v1().events().inNamespace("default").list().getItems().stream()
                .filter(e -> reason.equals(e.getReason())).toList();
    }

    // The scenario's outcome in the test output: which nodes, what condition, which Events.
    private void logOutcome(String scenario) {
        Condition c = stormCondition();
        System.out.println("storm scenario=\"" + scenario + "\" fenced=" + fencedNodes() + " tainted=" + tainted()
                + " nodes=" + client.nodes().list().getItems().stream().map(n -> n.getMetadata().getName()).toList()
                + " condition=" + (c == null ? "none" : c.getStatus() + "/" + c.getReason() + " \"" + c.getMessage()
                + "\"") + " events=" + events(StormLimitCondition.EVENT_REASON).stream().map(Event::getMessage)
                .toList());
    }

    @Test
    void aSwitchFailureTakingOutHalfTheGroupTaintsNobodyAndTheConditionAndEventSayWhy() throws Exception {
        startArmedGroup(6, NodeType.STATIC, null, 1);
        Set<String> failed = Set.of(name(4), name(5), name(6));
        fail(failed);
        pastTheSafeDelay(failed);

        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            Condition c = stormCondition();
            assertThat(c).isNotNull();
            assertThat(c.getStatus()).isEqualTo("True");
            assertThat(c.getReason()).isEqualTo("MinHealthy");
            assertThat(c.getMessage()).contains("only 3 of 6 nodes of group workers are healthy")
                    .contains("minHealthy 50%").contains("workers-4, workers-5, workers-6");
            assertThat(events(StormLimitCondition.EVENT_REASON)).singleElement()
                    .satisfies(e -> assertThat(e.getType()).isEqualTo("Warning"))
                    .satisfies(e -> assertThat(e.getMessage()).contains("only 3 of 6"));
        });
        await().during(1500, TimeUnit.MILLISECONDS).atMost(5, TimeUnit.SECONDS).until(() -> tainted().isEmpty());
        assertThat(events("OutOfServiceAdded")).isEmpty();
        logOutcome("3 of 6 unheard and NotReady");
    }

    @Test
    void nodesRecordedAsFencedAreNotTaintedWhileTooFewOfTheGroupAreHealthy() throws Exception {
        // 3 of 7 fail: the 4 others hold quorum, so all three are recorded as fenced; minHealthy 60% holds them.
        startArmedGroup(7, NodeType.STATIC, new FencingStorm().withMinHealthy(new IntOrString("60%")), 3);
        Set<String> failed = Set.of(name(5), name(6), name(7));
        fail(failed);
        pastTheSafeDelay(failed);

        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            assertThat(fencedNodes()).containsExactly(name(5), name(6), name(7));
            Condition c = stormCondition();
            assertThat(c.getReason()).isEqualTo("MinHealthy");
            assertThat(c.getMessage()).contains("only 4 of 7").contains("waiting: workers-5, workers-6, workers-7");
        });
        await().during(1500, TimeUnit.MILLISECONDS).atMost(5, TimeUnit.SECONDS).until(() -> tainted().isEmpty());
        logOutcome("3 of 7 recorded as fenced, minHealthy 60%");
    }

    @Test
    void oneNodeFailingAloneIsTainted() throws Exception {
        startArmedGroup(6, NodeType.STATIC, null, 1);
        Set<String> failed = Set.of(name(6));
        fail(failed);
        pastTheSafeDelay(failed);

        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            assertThat(tainted()).containsExactly(name(6));
            Condition c = stormCondition();
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getReason()).isEqualTo(StormLimitCondition.WITHIN_LIMITS);
        });
        assertThat(events(StormLimitCondition.EVENT_REASON)).isEmpty();
        logOutcome("1 of 6 unheard and NotReady");
    }

    @Test
    void aSecondFailureWaitsWhileTheGroupsOnlyFencingSlotIsTaken() throws Exception {
        // --max-out-of-service 3 leaves the limit to spec.fencing.storm.maxConcurrent (default 1).
        startArmedGroup(6, NodeType.STATIC, null, 3);
        Set<String> failed = Set.of(name(5), name(6));
        fail(failed);
        pastTheSafeDelay(failed);

        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            assertThat(fencedNodes()).containsExactly(name(5), name(6));
            assertThat(tainted()).containsExactly(name(5));
            Condition c = stormCondition();
            assertThat(c.getReason()).isEqualTo("MaxConcurrent");
            assertThat(c.getMessage()).contains("1 fencing(s) in progress (workers-5)").contains("waiting: workers-6");
        });
        await().during(1500, TimeUnit.MILLISECONDS).atMost(5, TimeUnit.SECONDS)
                .until(() -> tainted().equals(Set.of(name(5))));
        logOutcome("2 of 6 unheard, maxConcurrent 1");
    }

    @Test
    void aNewLeaderCountsTheTaintThePreviousOneAddedAndKeepsTheNextFailureWaiting() throws Exception {
        startArmedGroup(6, NodeType.STATIC, null, 3);
        Set<String> failed = Set.of(name(5), name(6));
        fail(failed);
        pastTheSafeDelay(failed);
        await().atMost(10, TimeUnit.SECONDS).until(() -> tainted().equals(Set.of(name(5))));

        // The leader goes; a new controller process (no memory of what was admitted) takes over and the healthy
        // agents reconnect to it.
        newLeader(List.of(name(1), name(2), name(3), name(4)));
        // A new replica counts a kubelet Lease renewal from when it first saw it: the delay runs again.
        now.set(now.get().plus(delay).plusSeconds(1));
        for (int i = 1; i <= 4; i++) {
            kubeletRenewed(name(i), now.get());
        }
        reportAll(failed);

        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            assertThat(fencedNodes()).containsExactly(name(5), name(6));
            Condition c = stormCondition();
            assertThat(c.getReason()).isEqualTo("MaxConcurrent");
            assertThat(c.getMessage()).contains("(workers-5)").contains("waiting: workers-6");
        });
        await().during(1500, TimeUnit.MILLISECONDS).atMost(5, TimeUnit.SECONDS)
                .until(() -> tainted().equals(Set.of(name(5))));
        logOutcome("new leader, 2 of 6 unheard, one tainted by the previous leader");
    }

    /**
     * Where the NodeGroup CRD's owner defines the status (Deckhouse), the leader keeps the group's status in the
     * ConfigMap fencing-status-&lt;group&gt;, and a new leader continues from it: a storm limit that held before the
     * leader change keeps holding for its cooldown, so a single failure right after the change is not fenced (on a
     * leader without that memory it would be, as in {@link #oneNodeFailingAloneIsTainted}).
     */
    @Test
    void whereTheCrdOwnerDefinesTheStatusANewLeaderContinuesTheCooldownFromTheStatusConfigMap() throws Exception {
        platformCrd = true;
        recorder = new ApiCallRecorder(server);
        controllerClient = recorder.controllerClient(client);
        startArmedGroup(6, NodeType.STATIC, new FencingStorm().withCooldown("1h"), 3);
        Set<String> failed = Set.of(name(4), name(5), name(6));
        fail(failed);
        pastTheSafeDelay(failed);
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            assertThat(stormCondition()).isNotNull();
            assertThat(stormCondition().getReason()).isEqualTo("MinHealthy");
        });
        assertThat(tainted()).isEmpty();

        // The three come back; the leader still holds the cooldown, and says so in the kept status.
        for (String n : failed) {
            client.nodes().withName(n).editStatus(node -> new NodeBuilder(node).editStatus().editMatchingCondition(
                    c -> "Ready".equals(c.getType())).withStatus("True").endCondition().endStatus().build());
            silent.remove(n);
            kubeletRenewed(n, now.get());
            connect(n);
        }
        lastContact = now.get();
        reportAll(Set.of());
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            assertThat(fencedNodes()).isEmpty();
            assertThat(stormCondition().getReason()).isEqualTo("Cooldown");
        });
        ConfigMap kept = client.configMaps().inNamespace("ns").withName(GroupStatusStore.name("workers")).get();
        assertThat(kept.getMetadata().getLabels()).containsEntry(GroupStatusStore.GROUP_LABEL, "workers");
        assertThat(kept.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
            assertThat(o.getKind()).isEqualTo("NodeGroup");
            assertThat(o.getUid()).isEqualTo(group().getMetadata().getUid());
        });
        // Nothing was written to the NodeGroup's status.
        assertThat(group().getStatus()).isNull();

        // The leader goes; a new controller process takes over and every agent reconnects to it.
        newLeader(members);
        now.set(now.get().plusSeconds(1));
        members.forEach(n -> kubeletRenewed(n, now.get()));
        lastContact = now.get();
        reportAll(Set.of());

        Set<String> alone = Set.of(name(6));
        fail(alone);
        pastTheSafeDelay(alone);
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            assertThat(fencedNodes()).containsExactly(name(6));
            Condition c = stormCondition();
            assertThat(c.getStatus()).isEqualTo("True");
            assertThat(c.getReason()).isEqualTo("Cooldown");
            assertThat(c.getMessage()).contains("waiting: workers-6");
        });
        await().during(1500, TimeUnit.MILLISECONDS).atMost(5, TimeUnit.SECONDS).until(() -> tainted().isEmpty());
        assertThat(group().getStatus()).isNull();
        logOutcome("platform CRD, new leader, one failure within the cooldown of a storm before the change");
    }

    @Test
    void aFencedCloudEphemeralNodeIsDeletedSoThePlatformReplacesIt() throws Exception {
        startArmedGroup(3, NodeType.CLOUD_EPHEMERAL, null, 1);
        Set<String> failed = Set.of(name(3));
        fail(failed);
        pastTheSafeDelay(failed);

        await().atMost(10, TimeUnit.SECONDS).until(() -> client.nodes().withName(name(3)).get() == null);
        assertThat(tainted()).isEmpty();
        assertThat(events("NodeDeleted")).singleElement().satisfies(e -> assertThat(e.getMessage())
                .contains("deleted the Node so the platform replaces the machine"));
        assertThat(client.nodes().withName(name(1)).get()).isNotNull();
    }

    /**
     * The agents' DaemonSet cannot be written (an admission webhook denies it, a 403): the reconcile logs it and goes on,
     * so a failed node is still recorded and tainted. Before, the exception ended every reconcile before the status.
     */
    @Test
    void aDaemonSetTheApiServerRefusesDoesNotStopFencing() throws Exception {
        startArmedGroup(3, NodeType.STATIC, null, 1);
        server.expect().post().withPath("/apis/apps/v1/namespaces/ns/daemonsets")
                .andReturn(403, "{\"kind\":\"Status\",\"code\":403,\"reason\":\"Forbidden\",\"message\":\"admission webhook denied the request\"}").always();
        client.apps().daemonSets().inNamespace("ns").withName("fencing-agent-workers").delete();
        Set<String> failed = Set.of(name(3));
        fail(failed);
        pastTheSafeDelay(failed);

        await().atMost(10, TimeUnit.SECONDS).until(() -> tainted().equals(Set.of(name(3))));
        assertThat(client.apps().daemonSets().inNamespace("ns").withName("fencing-agent-workers").get())
                .as("its re-creation keeps failing").isNull();
    }

    @Test
    void afterFenceTaintKeepsACloudEphemeralNode() throws Exception {
        startArmedGroup(3, NodeType.CLOUD_EPHEMERAL, null, 1);
        // a merge patch, not edit(): the controller writes the group's status meanwhile (a 409 for a locked edit)
        client.resources(NodeGroup.class).withName("workers").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"spec\":{\"fencing\":{\"afterFence\":\"Taint\"}}}");
        Set<String> failed = Set.of(name(3));
        fail(failed);
        pastTheSafeDelay(failed);

        await().atMost(10, TimeUnit.SECONDS).until(() -> tainted().equals(Set.of(name(3))));
        assertThat(client.nodes().withName(name(3)).get()).isNotNull();
        assertThat(events("NodeDeleted")).isEmpty();
    }

    private boolean ready(String node) {
        return client.nodes().withName(node).get().getStatus().getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private NodeCondition peersReachable(String node) {
        Node n = client.nodes().withName(node).get();
        return n.getStatus().getConditions().stream().filter(c -> PeersReachable.TYPE.equals(c.getType()))
                .findFirst().orElse(null);
    }

    @Test
    void aNodeTheControlPlaneLostButItsPeersStillHearIsVotedReachableAndLostOnceTheyDoNot() throws Exception {
        startArmedGroup(5, NodeType.STATIC, null, 1);
        // Past the per-node write interval of the votes written while the agents were still connecting.
        now.set(lastContact.plusSeconds(10));
        reportAll(Set.of());
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(peersReachable(name(5)))
                .extracting(NodeCondition::getStatus, NodeCondition::getReason).containsExactly("True",
                        "MajorityHears"));
        // workers-5 loses the control plane: its agent's stream ends and its kubelet's status goes NotReady, but
        // its peers still hear it.
        fail(Set.of(name(5)));
        now.set(lastContact.plusSeconds(20));
        reportAll(Set.of());
        await().during(1, TimeUnit.SECONDS).atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            NodeCondition c = peersReachable(name(5));
            assertThat(c.getStatus()).isEqualTo("True");
            assertThat(c.getMessage()).isEqualTo("4 of 4 reporting peers heard workers-5 within the quorum window "
                    + DurationFormat.format(window)
                    + " (4 other members in the group)");
            assertThat(ready(name(5))).isFalse();
        });
        assertThat(tainted()).isEmpty();

        // Now its peers lose it too. The first of their reports alone changes only the counts (3 of 4 still hear it,
        // from their reports of 25 s ago); that write must not hold back the flip once the others report, although
        // the clock does not move. (Past the minute that separates count-only writes from those at the start.)
        now.set(lastContact.plusSeconds(75));
        reportAll(Set.of());
        now.set(lastContact.plusSeconds(100));
        agents.get(name(1)).send(TestReports.armedHearing(name(1), members, Set.of(name(5)),
                Duration.between(lastContact, now.get())));
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(peersReachable(name(5)).getMessage())
                .startsWith("3 of 4 reporting peers heard workers-5"));
        reportAll(Set.of(name(5)));
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(peersReachable(name(5)))
                .extracting(NodeCondition::getStatus, NodeCondition::getReason).containsExactly("False",
                        "MajorityLost"));
        assertThat(peersReachable(name(1)).getStatus()).isEqualTo("True");
    }

    /**
     * Once no vote is taken (fencing switched off here), a node that carries the condition gets Unknown/NotVoted:
     * a True from before must not keep saying that its peers hear it.
     */
    @Test
    void whenFencingIsSwitchedOffTheVotesBecomeNotVoted() throws Exception {
        startArmedGroup(3, NodeType.STATIC, null, 1);
        now.set(lastContact.plusSeconds(10));
        reportAll(Set.of());
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(peersReachable(name(1)))
                .extracting(NodeCondition::getStatus).isEqualTo("True"));

        // Past the per-node write interval of the votes, then fencing goes.
        now.set(lastContact.plusSeconds(20));
        client.resources(NodeGroup.class).withName("workers").patch(
                io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                        io.fabric8.kubernetes.client.dsl.base.PatchType.JSON),
                "[{\"op\":\"remove\",\"path\":\"/spec/fencing\"}]");
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            for (int i = 1; i <= 3; i++) {
                NodeCondition c = peersReachable(name(i));
                assertThat(c.getStatus()).isEqualTo("Unknown");
                assertThat(c.getReason()).isEqualTo("NotVoted");
                assertThat(c.getMessage()).isEqualTo("fencing is off for group workers (no peer vote)");
            }
        });
    }
}
