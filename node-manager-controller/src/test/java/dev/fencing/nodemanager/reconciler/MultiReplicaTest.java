package dev.fencing.nodemanager.reconciler;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.grpc.TestAgent;
import dev.fencing.nodemanager.grpc.auth.TestAgentPods;
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.nodemanager.view.GroupView;
import dev.fencing.proto.fencing.v1.DisarmReason;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.Member;
import dev.fencing.proto.nodemanager.v1.TieBreakRequest;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Two replicas on one Lease: agents connected to the follower are seen and arbitrated by the leader. */
@CrudMockClient
class MultiReplicaTest {

    private static final String NS = "fencing-system";

    KubernetesClient client;
    KubernetesMockServer server;
    private final List<NodeManager> replicas = new ArrayList<>();
    private final List<TestAgent> agents = new ArrayList<>();
    private ManagedChannel channel;
    private ManagedChannel leaderChannel;

    @AfterEach
    void tearDown() throws Exception {
        agents.forEach(TestAgent::close);
        for (ManagedChannel c : new ManagedChannel[] {channel, leaderChannel}) {
            if (c != null) {
                c.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
            }
        }
        replicas.forEach(NodeManager::close);
    }

    /** Two replicas on one Lease, with the NodeGroup CRD and a grant-everything rules review for leader election. */
    private void startTwoReplicas() throws Exception {
        server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews")
                .andReturn(201, new SelfSubjectRulesReviewBuilder().withNewStatus().addNewResourceRule()
                        .withApiGroups("coordination.k8s.io").withResources("leases")
                        .withVerbs("create", "update", "get").endResourceRule().withIncomplete(false).endStatus()
                        .build())
                .always();
        try (InputStream crd = getClass().getResourceAsStream("/META-INF/fabric8/nodegroups.deckhouse.io-v1.yml")) {
            client.apiextensions().v1().customResourceDefinitions()
                    .resource(client.getKubernetesSerialization().unmarshal(crd, CustomResourceDefinition.class))
                    .create();
        }
        ControllerConfig b = ControllerConfig.forTests(NS);
        ControllerConfig config = new ControllerConfig(NS, 0, 0, b.gossipPort(), b.agentImage(),
                b.agentControllerAddress(), b.agentResources(), b.agentTolerations(), b.agentPriorityClass(), true,
                "node-manager-controller", null, null, Duration.ofMillis(500), Duration.ofSeconds(30), 100, 100,
                Duration.ofSeconds(1), 1, true, "127.0.0.1");
        for (int i = 0; i < 2; i++) {
            replicas.add(new NodeManager(client, config, InstantSource.system(),
                    new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).start());
        }
    }

    private static NodeGroup group(Fencing fencing) {
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName("workers").build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(fencing));
        return g;
    }

    @Test
    void aFollowerForwardsReportsAndTieBreakRequestsToTheLeader() throws Exception {
        startTwoReplicas();
        client.resource(group(new Fencing().withMode("Watchdog"))).create();
        for (int i = 1; i <= 4; i++) {
            client.nodes().resource(node("workers-" + i, "workers", i)).create();
        }
        await().atMost(30, TimeUnit.SECONDS).until(() -> replicas.stream().anyMatch(r -> r.leadership().isLeader()));
        NodeManager follower = replicas.stream().filter(r -> !r.leadership().isLeader()).findFirst().orElseThrow();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", follower.grpcPort()).usePlaintext().build();
        TestAgentPods pods = new TestAgentPods(server, client, NS);
        await().atMost(20, TimeUnit.SECONDS).until(() -> follower.distributor().ready("workers"));

        List<TestAgent> four = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            TestAgent a = TestAgent.connect(channel, "workers-" + i, pods.token("workers-" + i));
            agents.add(a);
            assertThat(a.next().hasFull()).isTrue();
            a.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(true).setQuorumHeld(true)
                    .setConfirmed(4).setMode(FencingMode.FENCING_MODE_WATCHDOG)).build());
            four.add(a);
        }
        // Only the leader writes status: armed=4 proves the follower passed the reports on.
        await().atMost(20, TimeUnit.SECONDS).until(() -> {
            NodeGroupStatus status = client.resources(NodeGroup.class).withName("workers").get().getStatus();
            return status != null && Integer.valueOf(4).equals(status.getArmed());
        });

        // The group view of the leader, to which no agent is connected, is complete: every agent reporting and armed.
        NodeManager leading = replicas.stream().filter(r -> r.leadership().isLeader()).findFirst().orElseThrow();
        HttpClient http = HttpClient.newHttpClient();
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            GroupView view = groupView(http, leading);
            assertThat(view.leader()).isTrue();
            assertThat(view.nodes()).extracting(GroupView.NodeRow::reporting).containsExactly(true, true, true, true);
            assertThat(view.nodes()).extracting(GroupView.NodeRow::armed).containsExactly(true, true, true, true);
        });
        assertThat(groupView(http, follower).leader()).isFalse();

        // A follower answers tie-breaks with the leader's decision, never its own "not leader".
        four.get(0).send(AgentMessage.newBuilder().setTieBreakRequest(TieBreakRequest.newBuilder().setRequestId(1)
                .addSide("workers-1").addSide("workers-2")).build());
        ControllerMessage answer = await().atMost(10, TimeUnit.SECONDS)
                .until(() -> four.get(0).received.poll(100, TimeUnit.MILLISECONDS), m -> m != null && m.hasTieBreak());
        assertThat(answer.getTieBreak().getRequestId()).isEqualTo(1);
        assertThat(answer.getTieBreak().getReason()).isNotEqualTo("not leader");

        // A clean stop: the final report, sent just before the agent closes its stream, still reaches the leader.
        NodeManager leader = replicas.stream().filter(r -> r.leadership().isLeader()).findFirst().orElseThrow();
        TestAgent stopping = four.get(3);
        stopping.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(false).setFinalReport(true)
                .setMode(FencingMode.FENCING_MODE_WATCHDOG).addDisarmReasons(DisarmReason.newBuilder()
                        .setKind(DisarmReason.Kind.KIND_SHUTTING_DOWN))).build());
        stopping.finish();
        await().atMost(10, TimeUnit.SECONDS).until(() -> leader.reports().latest("workers-4")
                .map(r -> r.report().getFinalReport()).orElse(false));
    }

    @Test
    void anAgentOnTheFollowerLearnsTheSecondNetworkAddressOfAPeerWhoseAgentStreamsToTheLeader() throws Exception {
        String n1 = "198.18.0.0/24";
        String n2 = "198.19.0.0/24";
        startTwoReplicas();
        client.resource(group(new Fencing().withMode("Watchdog").withNetworks(List.of(n1, n2))
                .withReachability("All"))).create();
        for (int i = 1; i <= 3; i++) {
            client.nodes().resource(node("workers-" + i, "workers", i)).create();
        }
        await().atMost(30, TimeUnit.SECONDS).until(() -> replicas.stream().anyMatch(r -> r.leadership().isLeader()));
        NodeManager leader = replicas.stream().filter(r -> r.leadership().isLeader()).findFirst().orElseThrow();
        NodeManager follower = replicas.stream().filter(r -> !r.leadership().isLeader()).findFirst().orElseThrow();
        TestAgentPods pods = new TestAgentPods(server, client, NS);
        channel = NettyChannelBuilder.forAddress("127.0.0.1", follower.grpcPort()).usePlaintext().build();
        leaderChannel = NettyChannelBuilder.forAddress("127.0.0.1", leader.grpcPort()).usePlaintext().build();
        await().atMost(20, TimeUnit.SECONDS).until(() -> follower.distributor().ready("workers")
                && leader.distributor().ready("workers"));

        TestAgent onLeader = TestAgent.connect(leaderChannel, "workers-1", pods.token("workers-1"));
        agents.add(onLeader);
        assertThat(onLeader.next().hasFull()).isTrue();
        TestAgent onFollower = TestAgent.connect(channel, "workers-2", pods.token("workers-2"));
        agents.add(onFollower);
        onLeader.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder()
                .setMode(FencingMode.FENCING_MODE_WATCHDOG).putNetworkAddresses(n1, "198.18.0.1")
                .putNetworkAddresses(n2, "198.19.0.21")).build());

        // Only the leader heard workers-1's report; the follower learns its address through the Node annotation.
        Map<String, Member> seen = new HashMap<>();
        await().atMost(20, TimeUnit.SECONDS).until(() -> {
            onFollower.applyMemberChanges(seen);
            return seen.containsKey("workers-1") && seen.get("workers-1").getGossipAddressesMap().containsKey(n2);
        });
        String port = seen.get("workers-1").getGossipAddress().replaceAll(".*:", "");
        assertThat(seen.get("workers-1").getGossipAddressesMap())
                .isEqualTo(Map.of(n1, "198.18.0.1:" + port, n2, "198.19.0.21:" + port));
    }

    private GroupView groupView(HttpClient http, NodeManager replica) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + replica.healthPort() + "/debug/groups/workers")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return client.getKubernetesSerialization().unmarshal(r.body(), GroupView.class);
    }
}
