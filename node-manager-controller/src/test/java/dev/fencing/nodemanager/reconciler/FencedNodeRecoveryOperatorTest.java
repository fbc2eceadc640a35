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
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.proto.fencing.v1.DisarmReason;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
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

/**
 * Safe-to-assume-fenced on a controllable wall clock: record, out-of-service taint, and release on return; and every
 * case the fenced-node rule excludes (Exclude, Wait, clean stop, Node still Ready, kubelet Lease still renewed).
 * In each scenario workers-3 was armed and the majority (workers-1, workers-2) has not heard it for longer than the
 * safe-to-assume-fenced delay; only the one condition under test differs from the positive case.
 */
@CrudMockClient
class FencedNodeRecoveryOperatorTest {

    KubernetesClient client;
    KubernetesMockServer server;
    private TestAgentPods pods;
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-22T10:00:00Z"));
    private final List<TestAgent> agents = new ArrayList<>();
    private NodeManager manager;
    private ManagedChannel channel;
    private Duration delay;
    private Instant lastContact;
    private TestAgent a1;
    private TestAgent a2;
    private TestAgent a3;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

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

    private static Node node(String name, int ip, boolean ready) {
        return new NodeBuilder(TestNodes.node(name, "workers", ip)).editStatus().addNewCondition().withType("Ready")
                .withStatus(ready ? "True" : "False").endCondition().endStatus().build();
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

    // The kubelet of node renewed its heartbeat Lease at the given instant.
    private void kubeletRenewed(String node, Instant at) {
        KubeletLeases.renewed(client, manager, node, at);
    }

    private void setReady(String node, boolean ready) {
        client.nodes().withName(node).editStatus(n -> new NodeBuilder(n).editStatus().editMatchingCondition(
                c -> "Ready".equals(c.getType())).withStatus(ready ? "True" : "False").endCondition().endStatus()
                .build());
    }

    /** A group of three, every agent armed and reporting, every kubelet renewing; workers-3 Ready as given. */
    private void startArmedGroup(String quorumLossAction) throws Exception {
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
        manager = new NodeManager(client, config, clock, registry).start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", manager.grpcPort()).usePlaintext().build();
        NodeGroup group = new NodeGroup();
        group.setMetadata(new ObjectMetaBuilder().withName("workers").build());
        group.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing().withMode("Watchdog")
                .withQuorumLossAction(quorumLossAction)));
        client.resource(group).create();
        for (int i = 1; i <= 3; i++) {
            client.nodes().resource(node("workers-" + i, i, true)).create();
            kubeletRenewed("workers-" + i, now.get());
        }
        delay = PolicyResolver.resolve(NodeGroupFencing.toFencingSpec(group), 3).timings()
                .safeToAssumeFencedDelay();
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.distributor().ready("workers"));
        a1 = connect("workers-1");
        a2 = connect("workers-2");
        a3 = connect("workers-3");
        for (TestAgent a : List.of(a1, a2, a3)) {
            report(a, true, 3, null);
        }
        await().atMost(10, TimeUnit.SECONDS).until(() -> client.nodes().withName("workers-3").get().getMetadata()
                .getLabels().containsKey(NodeLabels.FENCING_ENABLED));
        lastContact = now.get();
    }

    /** The majority reports workers-3 unheard since lastContact, {@code past} after the safe delay. */
    private void majorityUnheardPastTheDelay(Duration past) {
        now.set(lastContact.plus(delay).plus(past));
        report(a1, true, 2, Duration.between(lastContact, now.get()));
        report(a2, true, 2, Duration.between(lastContact, now.get()));
    }

    private List<FencedNode> fencedNodes() {
        return client.resources(NodeGroup.class).withName("workers").get().getStatus().getFencedNodes();
    }

    private boolean workers3Tainted() {
        Node n3 = client.nodes().withName("workers-3").get();
        return n3.getSpec() != null && n3.getSpec().getTaints() != null && !n3.getSpec().getTaints().isEmpty();
    }

    // Over several reconcile periods (300 ms each) workers-3 is neither recorded nor tainted.
    private void assertWorkers3NeverFenced() {
        await().during(1500, TimeUnit.MILLISECONDS).atMost(5, TimeUnit.SECONDS)
                .until(() -> fencedNodes() == null && !workers3Tainted());
        assertThat(client.v1().events().inNamespace("default").list().getItems()).extracting(e -> e.getReason())
                .doesNotContain("NodeFenced", "OutOfServiceAdded");
    }

    private void awaitWorkers3Fenced() {
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            assertThat(fencedNodes()).extracting(FencedNode::getName).containsExactly("workers-3");
            assertThat(workers3Tainted()).isTrue();
        });
    }

    @Test
    void anArmedNodeUnheardPastTheSafeDelayIsRecordedTaintedAndReleasedWhenItReturns() throws Exception {
        startArmedGroup("Fence");
        // workers-3 goes silent and Kubernetes agrees: NotReady, its kubelet stops renewing.
        a3.close();
        setReady("workers-3", false);
        majorityUnheardPastTheDelay(Duration.ofSeconds(-1));
        // Over several reconcile periods nothing may be recorded before the delay has passed.
        assertWorkers3NeverFenced();

        majorityUnheardPastTheDelay(Duration.ofSeconds(1));
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            List<FencedNode> fenced = fencedNodes();
            assertThat(fenced).extracting(FencedNode::getName).containsExactly("workers-3");
            assertThat(fenced.get(0).getFencedAt()).isEqualTo(lastContact.plus(delay).toString());
            Node n3 = client.nodes().withName("workers-3").get();
            assertThat(n3.getSpec().getTaints()).extracting(t -> t.getKey() + "=" + t.getValue() + ":" + t.getEffect())
                    .containsExactly("node.kubernetes.io/out-of-service=nodeshutdown:NoExecute");
            assertThat(n3.getMetadata().getAnnotations()).containsEntry(NodeFacts.TAINTED_BY_ANNOTATION, "fencing");
        });
        Node n1 = client.nodes().withName("workers-1").get();
        assertThat(n1.getSpec() == null ? null : n1.getSpec().getTaints()).isNullOrEmpty();
        // The controller's per-group gauges follow the recorded status and the taint.
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(registry.scrape())
                .contains("fencing_controller_group_fenced_nodes{group=\"workers\"} 1.0",
                        "fencing_controller_group_out_of_service_nodes{group=\"workers\"} 1.0"));

        // workers-3 reboots: Ready again and its agent reports again: the record and the taint go.
        setReady("workers-3", true);
        kubeletRenewed("workers-3", now.get());
        TestAgent back = connect("workers-3");
        report(back, false, 3, null);
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            assertThat(client.nodes().withName("workers-3").get().getSpec().getTaints()).isNullOrEmpty();
            assertThat(fencedNodes()).isNull();
            assertThat(client.v1().events().inNamespace("default").list().getItems())
                    .extracting(e -> e.getReason())
                    .contains("NodeFenced", "OutOfServiceAdded", "OutOfServiceRemoved");
        });
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(registry.scrape())
                .contains("fencing_controller_group_fenced_nodes{group=\"workers\"} 0.0",
                        "fencing_controller_group_out_of_service_nodes{group=\"workers\"} 0.0"));
    }

    /**
     * A node whose last report says it runs another config (here Wait: it was cut off before the group switched to
     * Fence) may still be running: it is held back, and the leader's group view says why. Once it reports the config
     * it was served (its members' digest, Fence) and falls silent again, it is recorded as before.
     */
    @Test
    void aNodeLastReportingAnotherConfigIsHeldBackWithTheReasonInTheViewThenRecordedOnTheServedOne()
            throws Exception {
        startArmedGroup("Fence");
        a3.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(true).setQuorumHeld(true)
                .setMode(FencingMode.FENCING_MODE_WATCHDOG)
                .setQuorumLossAction(dev.fencing.proto.fencing.v1.QuorumLossAction.QUORUM_LOSS_ACTION_WAIT)).build());
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.reports().latest("workers-3")
                .filter(r -> r.report().getQuorumLossAction()
                        == dev.fencing.proto.fencing.v1.QuorumLossAction.QUORUM_LOSS_ACTION_WAIT).isPresent());
        a3.close();
        setReady("workers-3", false);
        lastContact = now.get();
        majorityUnheardPastTheDelay(Duration.ofMinutes(5));
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> assertThat(manager.groupView("workers")
                .orElseThrow().heldBack()).containsOnlyKeys("workers-3").hasValueSatisfying(new org.assertj.core
                        .api.Condition<>(r -> r.contains("quorumLossAction WAIT"), "names the action")));
        assertWorkers3NeverFenced();

        // Back, served the current config: it reports that config's digest and Fence, then falls silent again.
        setReady("workers-3", true);
        kubeletRenewed("workers-3", now.get());
        TestAgent back = TestAgent.connect(channel, "workers-3", pods.token("workers-3"));
        agents.add(back);
        ControllerMessage full = back.next();
        String digest = dev.fencing.policy.MemberSetDigest.of(full.getFull().getMembersList().stream()
                .map(dev.fencing.proto.nodemanager.v1.Member::getName).toList());
        back.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(true).setQuorumHeld(true)
                .setMode(FencingMode.FENCING_MODE_WATCHDOG).setExpectedDigest(digest)
                .setQuorumLossAction(dev.fencing.proto.fencing.v1.QuorumLossAction.QUORUM_LOSS_ACTION_FENCE))
                .build());
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.reports().latest("workers-3")
                .filter(r -> !r.report().getExpectedDigest().isEmpty()).isPresent());
        back.close();
        setReady("workers-3", false);
        lastContact = now.get();
        majorityUnheardPastTheDelay(Duration.ofSeconds(1));
        awaitWorkers3Fenced();
        assertThat(manager.groupView("workers").orElseThrow().heldBack()).isEmpty();
    }

    @Test
    void anExcludeNodeKeepsRunningByDesignAndIsNeverRecordedOrTainted() throws Exception {
        startArmedGroup("Exclude");
        a3.close();
        setReady("workers-3", false);
        majorityUnheardPastTheDelay(Duration.ofMinutes(5));
        assertWorkers3NeverFenced();
    }

    @Test
    void aWaitNodeKeepsRunningByDesignAndIsNeverRecordedOrTainted() throws Exception {
        startArmedGroup("Wait");
        a3.close();
        setReady("workers-3", false);
        majorityUnheardPastTheDelay(Duration.ofMinutes(5));
        assertWorkers3NeverFenced();
    }

    @Test
    void aCleanStopIsNeverRecordedEvenWhenAStaleArmedLabelComesBack() throws Exception {
        startArmedGroup("Fence");
        // SIGTERM: the agent disarms, says so in its final report, then closes its stream; the node then shuts down.
        a3.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(false).setFinalReport(true)
                .setQuorumHeld(true).setMode(FencingMode.FENCING_MODE_WATCHDOG).addDisarmReasons(DisarmReason
                        .newBuilder().setKind(DisarmReason.Kind.KIND_SHUTTING_DOWN))).build());
        await().atMost(10, TimeUnit.SECONDS).until(() -> !client.nodes().withName("workers-3").get().getMetadata()
                .getLabels().containsKey(NodeLabels.FENCING_ENABLED));
        a3.close();
        setReady("workers-3", false);
        // A previous leader that never saw the final report writes the label back.
        client.nodes().withName("workers-3").edit(n -> new NodeBuilder(n).editMetadata()
                .addToLabels(NodeLabels.FENCING_ENABLED, "").endMetadata().build());
        majorityUnheardPastTheDelay(Duration.ofMinutes(5));
        assertWorkers3NeverFenced();
    }

    @Test
    void aNodeKubernetesStillSeesReadyIsNeverRecordedUntilItIsNotReady() throws Exception {
        startArmedGroup("Fence");
        a3.close();
        majorityUnheardPastTheDelay(Duration.ofMinutes(5));
        assertWorkers3NeverFenced();

        setReady("workers-3", false);
        awaitWorkers3Fenced();
    }

    @Test
    void aNodeWhoseKubeletStillRenewsItsLeaseIsNeverRecordedUntilItStops() throws Exception {
        startArmedGroup("Fence");
        a3.close();
        setReady("workers-3", false);
        Instant renewed = lastContact.plus(delay).plusSeconds(10);
        kubeletRenewed("workers-3", renewed);
        majorityUnheardPastTheDelay(Duration.ofSeconds(20));
        assertWorkers3NeverFenced();

        // The kubelet stops too: from its last renewal + the delay, Kubernetes agrees.
        now.set(renewed.plus(delay).plusSeconds(1));
        report(a1, true, 2, Duration.between(lastContact, now.get()));
        report(a2, true, 2, Duration.between(lastContact, now.get()));
        awaitWorkers3Fenced();
        assertThat(fencedNodes().get(0).getFencedAt()).isEqualTo(renewed.plus(delay).toString());
    }
}
