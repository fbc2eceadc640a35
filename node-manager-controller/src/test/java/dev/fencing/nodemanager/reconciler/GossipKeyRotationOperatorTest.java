package dev.fencing.nodemanager.reconciler;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.grpc.TestAgent;
import dev.fencing.nodemanager.grpc.auth.TestAgentPods;
import dev.fencing.nodemanager.keyring.KeyRotationPlanner;
import dev.fencing.nodemanager.keyring.KeyringState;
import dev.fencing.nodemanager.model.GossipKeyringSecret;
import dev.fencing.nodemanager.rbac.ApiCallRecorder;
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.GossipKeyring;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The three rotation phases on the CRUD mock with fake agents: k-1 and k-2 connected, k-3 connected until phase 2
 * and then only heard in gossip (it must block phase 3), k-4 neither connected nor heard (it must not block).
 */
@CrudMockClient
class GossipKeyRotationOperatorTest {

    private static final String NS = "fencing-system";
    private static final String GROUP = "k";

    KubernetesMockServer server;
    KubernetesClient client;

    private NodeManager manager;
    private ManagedChannel channel;
    private TestAgentPods pods;
    private ApiCallRecorder recorder;
    private KubernetesClient controllerClient;
    private final List<TestAgent> agents = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        OperatorFixtures.installNodeGroupCrd(client);
        recorder = new ApiCallRecorder(server);
        controllerClient = recorder.controllerClient(client);
        manager = new NodeManager(controllerClient, ControllerConfig.forTests(NS), InstantSource.system(),
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", manager.grpcPort()).usePlaintext().build();
        pods = new TestAgentPods(server, client, NS);
    }

    @AfterEach
    void tearDown() throws Exception {
        agents.forEach(TestAgent::close);
        channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        manager.close();
        controllerClient.close();
        // Rotation writes the keyring Secret: the chart's roles must allow every call made.
        recorder.assertChartAllowsEveryCall(NS);
    }

    private TestAgent connect(String node) {
        TestAgent agent = OperatorFixtures.connectServed(channel, pods, node);
        agents.add(agent);
        return agent;
    }

    // The keyring the agent holds after applying everything it received so far.
    private static GossipKeyring keyringOf(TestAgent agent, GossipKeyring current) {
        GossipKeyring k = current;
        ControllerMessage m;
        while ((m = agent.received.poll()) != null) {
            if (m.hasFull()) {
                k = m.getFull().getKeyring();
            } else if (m.getDelta().hasKeyring()) {
                k = m.getDelta().getKeyring();
            }
        }
        return k;
    }

    private static void report(TestAgent agent, long keyringRevision, String... heard) {
        AgentReport.Builder r = AgentReport.newBuilder().setKeyringRevision(keyringRevision);
        for (String peer : heard) {
            r.addPeers(PeerReport.newBuilder().setName(peer)
                    .setSinceLastHeard(com.google.protobuf.Duration.newBuilder().setSeconds(1)));
        }
        agent.send(AgentMessage.newBuilder().setReport(r).build());
    }

    private KeyringState secretState() {
        Secret s = client.secrets().inNamespace(NS).withName(GossipKeyringSecret.name(GROUP)).get();
        return KeyringState.of(s.getData(), s.getMetadata().getAnnotations());
    }

    private Condition rotationCondition() {
        NodeGroup g = client.resources(NodeGroup.class).withName(GROUP).get();
        assertThat(g.getStatus()).isNotNull();
        assertThat(g.getStatus().getConditions()).isNotNull();
        return g.getStatus().getConditions().stream()
                .filter(c -> KeyRotationPlanner.CONDITION.equals(c.getType())).findFirst()
                .orElseThrow(() -> new AssertionError("no " + KeyRotationPlanner.CONDITION + " condition yet"));
    }

    private void annotate(String key, String value) {
        // a merge patch, not edit(): the controller writes the group's status meanwhile (a 409 for a locked edit)
        client.resources(NodeGroup.class).withName(GROUP).patch(PatchContext.of(PatchType.JSON_MERGE),
                Serialization.asJson(Map.of("metadata", Map.of("annotations", Map.of(key, value)))));
    }

    private GossipKeyring awaitKeyring(TestAgent agent, GossipKeyring[] held, long revision) {
        await().atMost(15, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
            held[0] = keyringOf(agent, held[0]);
            assertThat(held[0].getRevision()).isEqualTo(revision);
        });
        return held[0];
    }

    /**
     * A controller restarted in the middle of a rotation holds no agent stream and no report: it must not take the
     * silence for "nobody needs to catch up" and write the remaining phases at once (the agents reconnecting later
     * would switch keys one by one and cut each other off). It waits for a quorum of the group, then goes on.
     */
    @Test
    void aRestartedControllerWithoutAgentsYetDoesNotAdvanceARunningRotation() throws Exception {
        client.resource(OperatorFixtures.watchdogGroup(GROUP)).create();
        for (int i = 1; i <= 4; i++) {
            client.nodes().resource(node(GROUP + "-" + i, GROUP, i)).create();
        }
        connect("k-1");
        connect("k-2");
        connect("k-3");
        annotate(KeyRotationPlanner.ROTATE_ANNOTATION, "2026-11-29");
        await().atMost(15, TimeUnit.SECONDS).until(() -> secretState().revision() == 1);
        assertThat(secretState().phase().reason()).isEqualTo("Phase1InstallSecondary");

        // The controller restarts before any agent reported revision 1; no agent is back yet.
        agents.forEach(TestAgent::close);
        agents.clear();
        channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        manager.close();
        manager = new NodeManager(controllerClient, ControllerConfig.forTests(NS), InstantSource.system(),
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", manager.grpcPort()).usePlaintext().build();
        await().atMost(15, TimeUnit.SECONDS).untilAsserted(() -> assertThat(rotationCondition().getMessage())
                .contains("WaitingFor: k-1,k-2,k-3,k-4"));
        // Several status intervals (500 ms here) of reconciles: still phase 1.
        await().during(3, TimeUnit.SECONDS).atMost(6, TimeUnit.SECONDS)
                .until(() -> secretState().revision() == 1);

        // The agents come back and report revision 1: the rotation goes on.
        TestAgent b1 = connect("k-1");
        TestAgent b2 = connect("k-2");
        TestAgent b3 = connect("k-3");
        report(b1, 1, "k-2", "k-3");
        report(b2, 1, "k-1", "k-3");
        report(b3, 1, "k-1", "k-2");
        await().atMost(15, TimeUnit.SECONDS).until(() -> secretState().revision() == 2);
        assertThat(secretState().phase().reason()).isEqualTo("Phase2UseNewPrimary");
    }

    @Test
    void rotationWalksThreePhasesBlockedOnlyByReachableAgents() throws Exception {
        client.resource(OperatorFixtures.watchdogGroup(GROUP)).create();
        for (int i = 1; i <= 4; i++) {
            client.nodes().resource(node(GROUP + "-" + i, GROUP, i)).create();
        }
        TestAgent a1 = connect("k-1");
        TestAgent a2 = connect("k-2");
        TestAgent a3 = connect("k-3");
        GossipKeyring[] k1 = {GossipKeyring.getDefaultInstance()};
        GossipKeyring[] k3 = {GossipKeyring.getDefaultInstance()};
        GossipKeyring before = keyringOf(a1, k1[0]);
        k1[0] = before;
        ByteString oldKey = before.getPrimary();
        assertThat(oldKey.isEmpty()).isFalse();
        keyringOf(a3, k3[0]);

        annotate(KeyRotationPlanner.ROTATE_ANNOTATION, "2026-11-23");

        // Phase 1: the new key arrives as a secondary; k-4 (never connected, never heard) is not awaited.
        GossipKeyring phase1 = awaitKeyring(a1, k1, 1);
        assertThat(phase1.getPrimary()).isEqualTo(oldKey);
        assertThat(phase1.getSecondaryCount()).isEqualTo(1);
        ByteString newKey = phase1.getSecondary(0);
        await().atMost(15, TimeUnit.SECONDS).untilAsserted(() -> {
            Condition c = rotationCondition();
            assertThat(c.getReason()).isEqualTo("Phase1InstallSecondary");
            assertThat(c.getMessage()).contains("WaitingFor: k-1,k-2,k-3").doesNotContain("k-4");
        });
        report(a1, 1, "k-2", "k-3");
        report(a2, 1, "k-1", "k-3");
        report(a3, 1, "k-1", "k-2");

        // Phase 2: the new key is the primary, the old one still accepted.
        GossipKeyring phase2 = awaitKeyring(a1, k1, 2);
        assertThat(phase2.getPrimary()).isEqualTo(newKey);
        assertThat(phase2.getSecondaryList()).containsExactly(oldKey);

        // k-3 loses its controller link before it installs revision 2, but k-1 and k-2 still hear it.
        a3.close();
        report(a1, 2, "k-2", "k-3");
        report(a2, 2, "k-1", "k-3");
        await().atMost(15, TimeUnit.SECONDS).untilAsserted(() -> {
            Condition c = rotationCondition();
            assertThat(c.getReason()).isEqualTo("Phase2UseNewPrimary");
            assertThat(c.getMessage()).contains("WaitingFor: k-3").doesNotContain("k-1,").doesNotContain("k-4");
        });
        assertThat(secretState().phase().reason()).isEqualTo("Phase2UseNewPrimary");
        assertThat(secretState().data()).hasSize(2);

        // k-3 reconnects: its full config carries the current keyring.
        TestAgent back = connect("k-3");
        GossipKeyring[] kb = {GossipKeyring.getDefaultInstance()};
        assertThat(awaitKeyring(back, kb, 2).getPrimary()).isEqualTo(newKey);
        report(back, 2, "k-1", "k-2");

        // Phase 3: the old key is gone.
        GossipKeyring phase3 = awaitKeyring(a1, k1, 3);
        assertThat(phase3.getPrimary()).isEqualTo(newKey);
        assertThat(phase3.getSecondaryCount()).isZero();
        report(a1, 3, "k-2", "k-3");
        report(a2, 3, "k-1", "k-3");
        report(back, 3, "k-1", "k-2");

        await().atMost(15, TimeUnit.SECONDS).untilAsserted(() -> {
            Condition c = rotationCondition();
            assertThat(c.getReason()).isEqualTo("Completed");
            assertThat(c.getStatus()).isEqualTo("True");
        });
        KeyringState done = secretState();
        assertThat(done.completedRequest()).isEqualTo("2026-11-23");
        assertThat(done.phase()).isNull();
        assertThat(Base64.getDecoder().decode(done.data().get("primary"))).isEqualTo(newKey.toByteArray());
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(client.v1().events().inAnyNamespace()
                .list().getItems()).extracting(Event::getReason).contains("GossipKeyPhase1InstallSecondary",
                        "GossipKeyPhase2UseNewPrimary", "GossipKeyPhase3RemoveOld", "GossipKeyRotationCompleted"));

        // The same request value again (another annotation edit wakes the reconciler) rotates nothing.
        annotate("unrelated", "touch");
        annotate(KeyRotationPlanner.ROTATE_ANNOTATION, "2026-11-23");
        report(a1, 3, "k-2");
        await().during(Duration.ofSeconds(3)).atMost(10, TimeUnit.SECONDS)
                .untilAsserted(() -> assertThat(secretState().revision()).isEqualTo(3));
    }
}
