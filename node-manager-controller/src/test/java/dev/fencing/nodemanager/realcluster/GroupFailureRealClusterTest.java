package dev.fencing.nodemanager.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupFencing;
import dev.fencing.api.v1.NodeType;
import dev.fencing.kubetest.RealControlPlane;
import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.grpc.TestAgent;
import dev.fencing.nodemanager.grpc.TestReports;
import dev.fencing.nodemanager.grpc.auth.TokenReviewer;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.peervote.PeersReachable;
import dev.fencing.nodemanager.storm.StormLimitCondition;
import dev.fencing.policy.PolicyResolver;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Storm limits, Node deletion and the peers' vote on the real control plane: real kube-controller-manager (its node
 * lifecycle controller turns Nodes whose kubelet Lease stops NotReady), real DaemonSet controller and scheduler (agent
 * pods), real TokenReview (agent identity), and the controller holding only the chart's roles (so the Node deletion
 * and the Node condition are allowed by the chart's RBAC, not by an admin). The controller's wall clock is held by
 * the test, to pass the safe-to-assume-fenced delay and the write intervals without waiting for them.
 */
class GroupFailureRealClusterTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.withControllers();

    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.now());
    private final Map<String, TestAgent> agents = new LinkedHashMap<>();
    private final Set<String> renewing = ConcurrentHashMap.newKeySet();
    // Agents whose streams ended: they send nothing more.
    private final Set<String> silent = new java.util.HashSet<>();
    private final ScheduledExecutorService kubelets = Executors.newSingleThreadScheduledExecutor();
    private KubernetesClient admin;
    private String namespace;
    private KubernetesClient controllerClient;
    private NodeManager manager;
    private ManagedChannel channel;
    private String group;
    private List<String> nodes;

    @BeforeEach
    void startController() throws Exception {
        RealControlPlane plane = KUBE.get();
        admin = plane.adminClient();
        RealCluster.installCrd(admin);
        namespace = RealCluster.namespace(plane, "storm");
        controllerClient = RealCluster.client(RealCluster.controllerKubeconfig(plane, namespace));
        manager = RealCluster.controller(controllerClient, namespace, now::get);
        channel = NettyChannelBuilder.forAddress("127.0.0.1", manager.grpcPort()).usePlaintext().build();
        // Kubelet stand-ins: every node in renewing renews its Lease every second, as a kubelet does every 10 s.
        kubelets.scheduleAtFixedRate(() -> renewing.forEach(this::renewLease), 0, 1, TimeUnit.SECONDS);
    }

    @AfterEach
    void tearDown() throws Exception {
        kubelets.shutdownNow();
        agents.values().forEach(TestAgent::close);
        channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        manager.close();
        controllerClient.close();
        // Every controller on this shared API server manages every NodeGroup: leave none behind.
        admin.resources(NodeGroup.class).withName(group).delete();
        nodes.forEach(n -> admin.nodes().withName(n).delete());
    }

    private void renewLease(String node) {
        Lease lease = new LeaseBuilder().withNewMetadata().withName(node).withNamespace("kube-node-lease")
                .endMetadata().withNewSpec().withHolderIdentity(node).withLeaseDurationSeconds(40)
                .withRenewTime(ZonedDateTime.now(ZoneOffset.UTC)).endSpec().build();
        try {
            admin.leases().inNamespace("kube-node-lease").resource(lease).createOr(e -> e.update());
        } catch (RuntimeException e) {
            System.err.println("kubelet stand-in: renewing the Lease of " + node + " failed: " + e.getMessage());
        }
    }

    /** Registers {@code size} Ready Nodes with renewing kubelets, the group, and one connected armed agent each. */
    private void armedGroup(String prefix, int size, NodeType type, int subnet) {
        group = KUBE.get().uniqueName(prefix);
        nodes = RealCluster.registerNodes(admin, group, size, subnet);
        for (String n : nodes) {
            renewing.add(n);
            // A strategic merge patch keyed by condition type, as the kubelet sends it: no resourceVersion, so the
            // node lifecycle controller's concurrent writes (taints) cannot make it conflict.
            String at = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
            admin.nodes().withName(n).subresource("status").patch(PatchContext.of(PatchType.STRATEGIC_MERGE),
                    "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":"
                            + "\"KubeletReady\",\"lastHeartbeatTime\":\"" + at + "\",\"lastTransitionTime\":\""
                            + at + "\"}]}}");
        }
        NodeGroup g = RealCluster.watchdogGroup(group, new Fencing().withQuorumLossAction("Fence"));
        g.getSpec().setNodeType(type);
        admin.resource(g).create();
        Map<String, Pod> pods = RealCluster.agentPods(admin, namespace, group, nodes);
        await().atMost(Duration.ofSeconds(30)).until(() -> manager.distributor().ready(group));
        for (String n : nodes) {
            Pod pod = pods.get(n);
            String token = KUBE.get().requestToken(namespace, RealCluster.AGENT_SERVICE_ACCOUNT,
                    List.of(TokenReviewer.AUDIENCE), Duration.ofMinutes(10), pod.getMetadata().getName(),
                    pod.getMetadata().getUid());
            TestAgent a = TestAgent.connect(channel, n, token);
            await().atMost(Duration.ofSeconds(20)).until(() -> a.received.poll(100, TimeUnit.MILLISECONDS),
                    m -> m != null && m.hasFull());
            agents.put(n, a);
        }
        report(Set.of(), Duration.ZERO);
        await().atMost(Duration.ofSeconds(20)).until(() -> nodes.stream().allMatch(n -> admin.nodes().withName(n)
                .get().getMetadata().getLabels().containsKey(NodeLabels.FENCING_ENABLED)));
    }

    private void reportFrom(List<String> from, Set<String> failed, Duration unheard) {
        from.forEach(n -> agents.get(n).send(TestReports.armedHearing(n, agents.keySet(), failed, unheard)));
    }

    private void report(Set<String> failed, Duration unheard) {
        reportFrom(agents.keySet().stream().filter(n -> !failed.contains(n) && !silent.contains(n)).toList(), failed,
                unheard);
    }

    /**
     * {@code failed} lose their network: agents silent, kubelets stop renewing; the real node lifecycle controller
     * turns them NotReady. Then the controller's clock passes the safe-to-assume-fenced delay and the others report
     * them unheard since the failure.
     */
    private void switchFails(Set<String> failed) {
        Instant failedAt = now.get();
        failed.forEach(n -> {
            renewing.remove(n);
            silent.add(n);
            agents.get(n).close();
        });
        await().atMost(Duration.ofSeconds(40)).until(() -> failed.stream().noneMatch(this::ready));
        Duration delay = PolicyResolver.resolve(NodeGroupFencing.toFencingSpec(admin.resources(NodeGroup.class)
                .withName(group).get()), nodes.size()).timings().safeToAssumeFencedDelay();
        now.set(Instant.now().plus(delay).plusSeconds(60));
        report(failed, Duration.between(failedAt, now.get()));
    }

    private boolean ready(String node) {
        Node n = admin.nodes().withName(node).get();
        return n != null && n.getStatus().getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private Condition stormCondition() {
        NodeGroup g = admin.resources(NodeGroup.class).withName(group).get();
        if (g.getStatus() == null || g.getStatus().getConditions() == null) {
            return null;
        }
        return g.getStatus().getConditions().stream().filter(c -> StormLimitCondition.TYPE.equals(c.getType()))
                .findFirst().orElse(null);
    }

    private Set<String> outOfService() {
        Set<String> out = new TreeSet<>();
        for (String n : nodes) {
            Node node = admin.nodes().withName(n).get();
            if (node != null && node.getSpec().getTaints() != null && node.getSpec().getTaints().stream()
                    .anyMatch(t -> "node.kubernetes.io/out-of-service".equals(t.getKey()))) {
                out.add(n);
            }
        }
        return out;
    }

    private List<String> events(String reason) {
        List<String> out = new ArrayList<>();
        for (Event e : admin.v1().events().inNamespace("default").list().getItems()) {
            if (reason.equals(e.getReason()) && (group.equals(e.getInvolvedObject().getName())
                    || nodes.contains(e.getInvolvedObject().getName()))) {
                out.add(e.getInvolvedObject().getName() + ": " + e.getMessage());
            }
        }
        return out;
    }

    // The scenario's outcome in the test output: which nodes, what condition, which Events.
    private void logOutcome(String scenario) {
        Condition c = stormCondition();
        System.out.println("storm scenario=\"" + scenario + "\" group=" + group + " notReady="
                + nodes.stream().filter(n -> !ready(n)).toList() + " tainted=" + outOfService() + " remaining="
                + nodes.stream().filter(n -> admin.nodes().withName(n).get() != null).toList() + " condition="
                + (c == null ? "none" : c.getStatus() + "/" + c.getReason() + " \"" + c.getMessage() + "\"")
                + " events=" + events(StormLimitCondition.EVENT_REASON));
    }

    @Test
    void aSwitchFailureTakingOutHalfTheGroupTaintsNobodyAndSaysWhy() {
        armedGroup("storm", 6, NodeType.STATIC, 41);
        Set<String> failed = Set.of(nodes.get(3), nodes.get(4), nodes.get(5));
        switchFails(failed);

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            Condition c = stormCondition();
            assertThat(c).isNotNull();
            assertThat(c.getStatus()).isEqualTo("True");
            assertThat(c.getReason()).isEqualTo("MinHealthy");
            assertThat(c.getMessage()).contains("only 3 of 6 nodes of group " + group + " are healthy");
            assertThat(events(StormLimitCondition.EVENT_REASON)).singleElement().asString().contains("only 3 of 6");
        });
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() -> outOfService().isEmpty());
        assertThat(events("OutOfServiceAdded")).isEmpty();
        logOutcome("switch failure: 3 of 6 unheard and NotReady");
    }

    @Test
    void oneNodeFailingAloneIsTainted() {
        armedGroup("single", 4, NodeType.STATIC, 42);
        String failed = nodes.get(3);
        switchFails(Set.of(failed));

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(outOfService()).containsExactly(failed);
            assertThat(stormCondition().getReason()).isEqualTo(StormLimitCondition.WITHIN_LIMITS);
        });
        assertThat(events("OutOfServiceAdded")).singleElement().asString().startsWith(failed + ": ");
        logOutcome("one node of 4 unheard and NotReady");
    }

    @Test
    void aFencedCloudEphemeralNodeIsDeletedWithTheChartsPrivileges() {
        armedGroup("cloud", 3, NodeType.CLOUD_EPHEMERAL, 43);
        String failed = nodes.get(2);
        switchFails(Set.of(failed));

        await().atMost(Duration.ofSeconds(30)).until(() -> admin.nodes().withName(failed).get() == null);
        assertThat(outOfService()).isEmpty();
        assertThat(events("NodeDeleted")).singleElement().asString().startsWith(failed + ": ");
        assertThat(admin.nodes().withName(nodes.get(0)).get()).isNotNull();
        logOutcome("CloudEphemeral: one node of 3 unheard and NotReady");
    }

    private NodeCondition peersReachable(String node) {
        return admin.nodes().withName(node).get().getStatus().getConditions().stream()
                .filter(c -> PeersReachable.TYPE.equals(c.getType())).findFirst().orElse(null);
    }

    @Test
    void aNodeTheControlPlaneLostButItsPeersStillHearStaysVotedReachableThroughTheNodeLifecycleController() {
        armedGroup("peers", 5, NodeType.STATIC, 44);
        String lost = nodes.get(4);
        // Its kubelet and agent lose the control plane; its peers still hear it.
        renewing.remove(lost);
        silent.add(lost);
        agents.get(lost).close();
        await().atMost(Duration.ofSeconds(40)).until(() -> !ready(lost));
        // Past the per-node write interval of the votes written while the agents were connecting.
        now.set(now.get().plusSeconds(10));
        report(Set.of(), Duration.ZERO);

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            NodeCondition c = peersReachable(lost);
            assertThat(c).isNotNull();
            assertThat(c.getStatus()).isEqualTo("True");
            assertThat(c.getReason()).isEqualTo("MajorityHears");
            assertThat(c.getMessage()).startsWith("4 of 4 reporting peers heard " + lost);
        });
        Node n = admin.nodes().withName(lost).get();
        System.out.println("peer vote: node " + lost + " Ready=" + n.getStatus().getConditions().stream()
                .filter(c -> "Ready".equals(c.getType())).map(NodeCondition::getStatus).findFirst().orElse("?")
                + " taints=" + n.getSpec().getTaints().stream().map(t -> t.getKey() + ":" + t.getEffect()).toList()
                + " FencingPeersReachable=" + peersReachable(lost).getStatus() + " \"" + peersReachable(lost)
                .getMessage() + "\"");
        // The node lifecycle controller keeps updating the Node's status (Ready Unknown, taints); our entry stays.
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10))
                .until(() -> peersReachable(lost) != null && "True".equals(peersReachable(lost).getStatus()));
        assertThat(outOfService()).isEmpty();

        // Half the peers stop hearing it first: a tie, SplitVote. The other half follow: MajorityLost, a second
        // transition, which the node's write allowance (one transition per label interval) holds back until the
        // interval has passed; the held-back patch is computed again and written then. (The reports arrive one by
        // one in production too, so a reconcile between them writes the tie first.)
        now.set(now.get().plusSeconds(10));
        List<String> peers = nodes.subList(0, 4);
        reportFrom(peers.subList(0, 2), Set.of(lost), Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(peersReachable(lost).getReason())
                .isEqualTo("SplitVote"));
        reportFrom(peers.subList(2, 4), Set.of(lost), Duration.ofSeconds(30));
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10))
                .until(() -> "SplitVote".equals(peersReachable(lost).getReason()));
        now.set(now.get().plus(dev.fencing.nodemanager.reconciler.WriteLimits.DEFAULTS.labelPatchInterval()));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(peersReachable(lost).getReason())
                .isEqualTo("MajorityLost"));
    }
}
