package dev.fencing.nodemanager.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.FencedNode;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupFencing;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.grpc.TestAgent;
import dev.fencing.nodemanager.grpc.auth.TestAgentPods;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.model.TestNodes;
import dev.fencing.nodemanager.status.NodeFacts;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.InputStream;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Safe-to-assume-fenced on a controllable wall clock: record, out-of-service taint, and release on return. */
@EnableKubernetesMockClient(crud = true)
class FencedNodeRecoveryOperatorTest {

    KubernetesClient client;
    KubernetesMockServer server;
    private TestAgentPods pods;
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-22T10:00:00Z"));
    private final List<TestAgent> agents = new ArrayList<>();
    private NodeManager manager;
    private ManagedChannel channel;

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

    private static Node readyNode(String name, int ip) {
        return new NodeBuilder(TestNodes.node(name, "workers", ip)).editStatus().addNewCondition().withType("Ready")
                .withStatus("True").endCondition().endStatus().build();
    }

    private TestAgent connect(String node) throws InterruptedException {
        TestAgent a = TestAgent.connect(channel, node, pods.token(node));
        agents.add(a);
        ControllerMessage first = a.next();
        assertThat(first.hasFull()).isTrue();
        return a;
    }

    private static void report(TestAgent a, boolean armed, int confirmed, Duration sinceHeardC) {
        AgentReport.Builder r = AgentReport.newBuilder().setArmed(armed).setQuorumHeld(true).setConfirmed(confirmed)
                .setMode(FencingMode.FENCING_MODE_WATCHDOG);
        if (sinceHeardC != null) {
            r.addPeers(PeerReport.newBuilder().setName("workers-3").setConfirmed(false)
                    .setSinceLastHeard(com.google.protobuf.Duration.newBuilder().setSeconds(sinceHeardC.getSeconds())
                            .setNanos(sinceHeardC.getNano())));
        }
        a.send(AgentMessage.newBuilder().setReport(r).build());
    }

    @Test
    void anArmedNodeUnheardPastTheSafeDelayIsRecordedTaintedAndReleasedWhenItReturns() throws Exception {
        try (InputStream crd = getClass().getResourceAsStream("/META-INF/fabric8/nodegroups.deckhouse.io-v1.yml")) {
            client.apiextensions().v1().customResourceDefinitions()
                    .resource(client.getKubernetesSerialization().unmarshal(crd, CustomResourceDefinition.class))
                    .create();
        }
        ControllerConfig b = ControllerConfig.forTests("ns");
        ControllerConfig config = new ControllerConfig("ns", 0, -1, 7946, b.agentImage(), b.agentControllerAddress(),
                b.agentResources(), b.agentTolerations(), b.agentPriorityClass(), false, "l", null, null,
                Duration.ofMillis(300), Duration.ofSeconds(30), 100, 100, Duration.ofSeconds(30), 1, true, "127.0.0.1");
        InstantSource clock = now::get;
        pods = new TestAgentPods(server, client, "ns");
        manager = new NodeManager(client, config, clock, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT))
                .start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", manager.grpcPort()).usePlaintext().build();
        NodeGroup group = new NodeGroup();
        group.setMetadata(new ObjectMetaBuilder().withName("workers").build());
        group.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing().withMode("Watchdog")));
        client.resource(group).create();
        for (int i = 1; i <= 3; i++) {
            client.nodes().resource(readyNode("workers-" + i, i)).create();
        }
        Duration delay = PolicyResolver.resolve(NodeGroupFencing.toFencingSpec(group), 3).timings()
                .safeToAssumeFencedDelay();
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.distributor().ready("workers"));
        TestAgent a1 = connect("workers-1");
        TestAgent a2 = connect("workers-2");
        TestAgent a3 = connect("workers-3");
        for (TestAgent a : List.of(a1, a2, a3)) {
            report(a, true, 3, null);
        }
        await().atMost(10, TimeUnit.SECONDS).until(() -> client.nodes().withName("workers-3").get().getMetadata()
                .getLabels().containsKey(NodeLabels.FENCING_ENABLED));
        Instant lastContact = now.get();

        // workers-3 goes silent; the others hold quorum without it.
        a3.close();
        now.set(lastContact.plus(delay).minusSeconds(1));
        report(a1, true, 2, Duration.between(lastContact, now.get()));
        report(a2, true, 2, Duration.between(lastContact, now.get()));
        // Over several reconcile periods nothing may be recorded before the delay has passed.
        await().during(1, TimeUnit.SECONDS).atMost(3, TimeUnit.SECONDS).until(() -> client.resources(NodeGroup.class)
                .withName("workers").get().getStatus().getFencedNodes() == null);

        now.set(lastContact.plus(delay).plusSeconds(1));
        report(a1, true, 2, Duration.between(lastContact, now.get()));
        report(a2, true, 2, Duration.between(lastContact, now.get()));
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            List<FencedNode> fenced = client.resources(NodeGroup.class).withName("workers").get().getStatus()
                    .getFencedNodes();
            assertThat(fenced).extracting(FencedNode::getName).containsExactly("workers-3");
            assertThat(fenced.get(0).getFencedAt()).isEqualTo(lastContact.plus(delay).toString());
            Node n3 = client.nodes().withName("workers-3").get();
            assertThat(n3.getSpec().getTaints()).extracting(t -> t.getKey() + "=" + t.getValue() + ":" + t.getEffect())
                    .containsExactly("node.kubernetes.io/out-of-service=nodeshutdown:NoExecute");
            assertThat(n3.getMetadata().getAnnotations()).containsEntry(NodeFacts.TAINTED_BY_ANNOTATION, "fencing");
        });
        Node n1 = client.nodes().withName("workers-1").get();
        assertThat(n1.getSpec() == null ? null : n1.getSpec().getTaints()).isNullOrEmpty();

        // workers-3 reboots and its agent reports again: the record and the taint go.
        TestAgent back = connect("workers-3");
        report(back, false, 3, null);
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            assertThat(client.nodes().withName("workers-3").get().getSpec().getTaints()).isNullOrEmpty();
            assertThat(client.resources(NodeGroup.class).withName("workers").get().getStatus().getFencedNodes())
                    .isNull();
            assertThat(client.v1().events().inNamespace("default").list().getItems())
                    .extracting(e -> e.getReason())
                    .contains("NodeFenced", "OutOfServiceAdded", "OutOfServiceRemoved");
        });
    }
}
