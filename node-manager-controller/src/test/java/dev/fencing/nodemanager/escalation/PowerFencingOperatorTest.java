package dev.fencing.nodemanager.escalation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.fencing.v1alpha1.ExecutionPolicy;
import dev.fencing.api.fencing.v1alpha1.FenceMethod;
import dev.fencing.api.fencing.v1alpha1.FenceParameter;
import dev.fencing.api.fencing.v1alpha1.FenceStage;
import dev.fencing.api.fencing.v1alpha1.NodeFencing;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfig;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfigSpec;
import dev.fencing.api.fencing.v1alpha1.NodeFencingPhase;
import dev.fencing.api.v1.FencedNode;
import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupFencing;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.grpc.TestAgent;
import dev.fencing.nodemanager.grpc.auth.TestAgentPods;
import dev.fencing.nodemanager.model.TestNodes;
import dev.fencing.nodemanager.status.NodeFacts;
import dev.fencing.nodemanager.status.GroupStatusStore;
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.nodemanager.testing.NodeGroupCrds;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The whole controller with {@code --power-fencing} on the CRUD mock: a node that self-fencing records as fenced, and
 * that a NodeFencingConfig covers, is not tainted by the safe-to-assume-fenced rule alone; escalationGrace later the
 * leader powers it off through its stage (a fake fence agent) and only then taints it.
 */
@CrudMockClient
class PowerFencingOperatorTest {

    KubernetesClient client;
    KubernetesMockServer server;
    @TempDir
    Path agentsDir;
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-23T10:00:00Z"));
    private final List<TestAgent> agents = new ArrayList<>();
    private NodeManager manager;
    private ManagedChannel channel;
    // The NodeGroup CRD defines the status itself (Deckhouse's): the leader keeps it in a ConfigMap.
    private boolean platformCrd;

    @AfterEach
    void tearDown() throws Exception {
        agents.forEach(TestAgent::close);
        if (channel != null) {
            channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        }
        if (manager != null) {
            manager.close();
        }
    }

    private void install(String crd) throws Exception {
        try (InputStream in = getClass().getResourceAsStream("/META-INF/fabric8/" + crd + "-v1.yml")) {
            client.apiextensions().v1().customResourceDefinitions().resource(client.getKubernetesSerialization()
                    .unmarshal(in, CustomResourceDefinition.class)).create();
        }
    }

    private static void report(TestAgent a, int confirmed, Duration sinceHeard3) {
        AgentReport.Builder r = AgentReport.newBuilder().setArmed(true).setQuorumHeld(true).setConfirmed(confirmed)
                .setMode(FencingMode.FENCING_MODE_WATCHDOG).setWatchdogCondition("ok");
        if (sinceHeard3 != null) {
            r.addPeers(PeerReport.newBuilder().setName("workers-3").setConfirmed(false)
                    .setSinceLastHeard(com.google.protobuf.Duration.newBuilder().setSeconds(sinceHeard3.getSeconds())));
        }
        a.send(AgentMessage.newBuilder().setReport(r).build());
    }

    private boolean tainted(String node) {
        return NodeFacts.of(client.nodes().withName(node).get(), null).outOfServiceByUs();
    }

    private List<FencedNode> fencedNodes() {
        if (platformCrd) {
            ConfigMap cm = client.configMaps().inNamespace("ns").withName(GroupStatusStore.name("workers")).get();
            return cm == null ? null
                    : GroupStatusStore.parse(cm, client.getKubernetesSerialization()).getFencedNodes();
        }
        NodeGroup g = client.resources(NodeGroup.class).withName("workers").get();
        return g.getStatus() == null ? null : g.getStatus().getFencedNodes();
    }

    /** Also where the status is kept in a ConfigMap (Deckhouse): the escalation reads the fenced nodes there. */
    @ParameterizedTest(name = "platformDefinedStatus={0}")
    @ValueSource(booleans = {false, true})
    void aCoveredNodeIsTaintedOnlyAfterItsFenceStageConfirmedPowerOff(boolean platformDefinedStatus)
            throws Exception {
        platformCrd = platformDefinedStatus;
        FakeFenceAgents fence = silenceWorkers3PastEscalationGrace(new Fencing().withMode("Watchdog")
                .withQuorumLossAction("Fence"));

        await().atMost(20, TimeUnit.SECONDS).until(() -> tainted("workers-3"));
        NodeFencing record = client.resources(NodeFencing.class).list().getItems().get(0);
        assertThat(record.getSpec().nodeGroup()).isEqualTo("workers");
        assertThat(record.getStatus().phase()).isEqualTo(NodeFencingPhase.Fenced);
        assertThat(record.getStatus().fencedAt()).isNotNull();
        assertThat(fence.power("workers-3")).isEqualTo("off");
        assertThat(tainted("workers-1")).isFalse();
        NodeGroup g = client.resources(NodeGroup.class).withName("workers").get();
        assertThat(g.getStatus() == null || g.getStatus().getFencedNodes() == null).as("status where it is kept")
                .isEqualTo(platformDefinedStatus);
    }

    /**
     * Review 3 #3: the BMC refuses, the record goes Failed and workers-3 is not tainted. The operator powers it off
     * by hand and confirms it on the record, as the PowerFencingFailed Event and the runbook say: the taint follows,
     * with no new agent run and no new record.
     */
    @Test
    void confirmingAManualPowerOffOfAFailedRecordTaintsTheNode() throws Exception {
        FakeFenceAgents fence = silenceWorkers3PastEscalationGrace(new Fencing().withMode("Watchdog")
                .withQuorumLossAction("Fence"), "fence_refuses");
        await().atMost(20, TimeUnit.SECONDS).until(() -> client.resources(NodeFencing.class).list().getItems()
                .stream().anyMatch(r -> r.getStatus() != null && r.getStatus().phase() == NodeFencingPhase.Failed));
        assertThat(tainted("workers-3")).isFalse();
        String name = client.resources(NodeFencing.class).list().getItems().get(0).getMetadata().getName();
        String runs = fence.log("fence_refuses");

        await().atMost(10, TimeUnit.SECONDS)
                .ignoreExceptionsInstanceOf(io.fabric8.kubernetes.client.KubernetesClientException.class)
                .until(() -> client.resources(NodeFencing.class).withName(name).edit(r -> {
                    r.getMetadata().setAnnotations(java.util.Map.of(NodeFencing.POWERED_OFF_ANNOTATION, "jdoe"));
                    return r;
                }) != null);

        await().atMost(10, TimeUnit.SECONDS).until(() -> tainted("workers-3"));
        List<NodeFencing> records = client.resources(NodeFencing.class).list().getItems();
        assertThat(records).singleElement().satisfies(r -> {
            assertThat(r.getMetadata().getName()).isEqualTo(name);
            assertThat(r.getStatus().phase()).isEqualTo(NodeFencingPhase.Fenced);
        });
        assertThat(fence.log("fence_refuses")).as("no agent ran again").isEqualTo(runs);
        assertThat(tainted("workers-1")).isFalse();
    }

    @Test
    void aStormLimitKeepsThePowerStageFromRunning() throws Exception {
        // minHealthy 100%: one node of three down already holds the limit, so nothing may be fenced.
        FakeFenceAgents fence = silenceWorkers3PastEscalationGrace(new Fencing().withMode("Watchdog")
                .withQuorumLossAction("Fence").withStorm(new dev.fencing.api.v1.FencingStorm()
                        .withMinHealthy(new io.fabric8.kubernetes.api.model.IntOrString("100%"))));

        await().during(3, TimeUnit.SECONDS).atMost(6, TimeUnit.SECONDS)
                .until(() -> !tainted("workers-3") && "on".equals(fence.power("workers-3")));
        NodeGroup g = client.resources(NodeGroup.class).withName("workers").get();
        assertThat(g.getStatus().getConditions()).anySatisfy(c -> {
            assertThat(c.getType()).isEqualTo("FencingStormLimit");
            assertThat(c.getStatus()).isEqualTo("True");
        });
    }

    /**
     * Starts the controller with power fencing, a three-node Watchdog + Fence group with {@code fencing} and a
     * NodeFencingConfig covering workers-3 (a fake fence agent), lets workers-3 fall silent until it is recorded as
     * fenced, checks nothing is tainted before escalationGrace, then moves past escalationGrace.
     */
    private FakeFenceAgents silenceWorkers3PastEscalationGrace(Fencing fencing) throws Exception {
        return silenceWorkers3PastEscalationGrace(fencing, "fence_good");
    }

    /** As above, with the stage's agent {@code agent}: {@code fence_good} works, {@code fence_refuses} refuses. */
    private FakeFenceAgents silenceWorkers3PastEscalationGrace(Fencing fencing, String agent) throws Exception {
        if (platformCrd) {
            client.apiextensions().v1().customResourceDefinitions()
                    .resource(NodeGroupCrds.platformDefined(client)).create();
        } else {
            install("nodegroups.deckhouse.io");
        }
        install(NodeFencingConfig.CRD_NAME);
        install(NodeFencing.CRD_NAME);
        FakeFenceAgents fence = new FakeFenceAgents(agentsDir).working("fence_good", "")
                .working("fence_refuses", "a password the test never gives");
        NodeFencingConfig config = new NodeFencingConfig();
        config.setMetadata(new ObjectMetaBuilder().withName("workers-bmc").build());
        config.setSpec(new NodeFencingConfigSpec(null, List.of("workers-3"), List.of(new FenceStage("bmc",
                ExecutionPolicy.One, null, "10s", List.of(new FenceMethod("ipmi", agent,
                        List.of(new FenceParameter("plug", "$(NODE_NAME)")), null)))), null, "30s", null));
        client.resources(NodeFencingConfig.class).resource(config).create();

        ControllerConfig b = ControllerConfig.forTests("ns");
        ControllerConfig cc = new ControllerConfig("ns", 0, -1, 7946, b.agentImage(), b.agentControllerAddress(),
                b.agentResources(), b.agentTolerations(), b.agentPriorityClass(), false, "l", null, null,
                Duration.ofMillis(300), Duration.ofSeconds(30), 100, 100, Duration.ofSeconds(30), 1, true,
                "127.0.0.1");
        TestAgentPods pods = new TestAgentPods(server, client, "ns");
        manager = new NodeManager(client, cc, now::get, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT))
                .powerFencing(new PowerFencingSettings(agentsDir, Duration.ofMillis(200), 2, -1)).start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", manager.grpcPort()).usePlaintext().build();
        NodeGroup group = new NodeGroup();
        group.setMetadata(new ObjectMetaBuilder().withName("workers").build());
        group.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(fencing));
        client.resource(group).create();
        for (int i = 1; i <= 3; i++) {
            client.nodes().resource(new NodeBuilder(TestNodes.node("workers-" + i, "workers", i)).editStatus()
                    .addNewCondition().withType("Ready").withStatus(i == 3 ? "False" : "True").endCondition()
                    .endStatus().build()).create();
        }
        Duration delay = PolicyResolver.resolve(NodeGroupFencing.toFencingSpec(group), 3).timings()
                .safeToAssumeFencedDelay();
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.distributor().ready("workers"));
        List<TestAgent> connected = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            TestAgent a = TestAgent.connect(channel, "workers-" + i, pods.token("workers-" + i));
            agents.add(a);
            a.next();
            connected.add(a);
            report(a, 3, null);
        }
        Instant lastContact = now.get();
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.reports().latest("workers-3").isPresent());
        // workers-3 goes silent (its kubelet never renewed a Lease here); the majority stops hearing it.
        connected.get(2).close();
        now.set(lastContact.plus(delay).plusSeconds(1));
        report(connected.get(0), 2, Duration.between(lastContact, now.get()));
        report(connected.get(1), 2, Duration.between(lastContact, now.get()));

        await().atMost(10, TimeUnit.SECONDS).until(() -> fencedNodes() != null && !fencedNodes().isEmpty());
        // Recorded as fenced, but the taint waits for the power stage, which waits for escalationGrace.
        await().during(1500, TimeUnit.MILLISECONDS).atMost(5, TimeUnit.SECONDS)
                .until(() -> !tainted("workers-3") && client.resources(NodeFencing.class).list().getItems().isEmpty());
        assertThat(fence.power("workers-3")).isEqualTo("on");

        now.set(now.get().plusSeconds(31));
        report(connected.get(0), 2, Duration.between(lastContact, now.get()));
        report(connected.get(1), 2, Duration.between(lastContact, now.get()));
        return fence;
    }
}
