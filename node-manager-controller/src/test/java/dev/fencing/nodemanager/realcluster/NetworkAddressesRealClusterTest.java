package dev.fencing.nodemanager.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.FencingWatchdog;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.kubetest.RealControlPlane;
import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.model.GossipAddressAnnotation;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.Member;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Per-network gossip addresses across controller replicas, against a real API server with the chart's privileges:
 * what one agent reports to the leader reaches an agent served by the follower, and, after the leader is killed, an
 * agent served by a replica started afterwards, without the reporting agent saying it again.
 */
class NetworkAddressesRealClusterTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.withControllers();

    private static final String N1 = "198.18.3.0/24";
    private static final String N2 = "198.19.3.0/24";

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        RealCluster.closeInReverse(closing);
    }

    @Test
    void anAgentsSecondNetworkAddressReachesPeersOnTheFollowerAndOnAReplicaStartedAfterTheLeaderDied()
            throws Exception {
        RealControlPlane plane = KUBE.get();
        RealCluster.LeaderElectedLab lab = RealCluster.LeaderElectedLab.create(plane, "nets");
        KubernetesClient admin = lab.admin();
        String namespace = lab.namespace();
        // InternalIPs 198.18.3.1-3: inside the first network; the second is known only from the agents' reports.
        List<String> nodes = RealCluster.registerNodes(admin, lab.group(), 3, 3);
        ControllerProcess a = lab.start("controller-a", lab.args());
        closing.add(a);
        ControllerProcess b = lab.start("controller-b", lab.args());
        closing.add(b);
        admin.resource(RealCluster.watchdogGroup(lab.group(), new Fencing()
                .withWatchdog(new FencingWatchdog().withTimeout("60s"))
                .withNetworks(List.of(N1, N2)).withReachability("All"))).create();
        closing.add(() -> admin.resources(NodeGroup.class).withName(lab.group()).delete());

        ControllerProcess leader = RealCluster.holder(lab.awaitHeldLease(), a, b);
        ControllerProcess follower = leader == a ? b : a;
        Map<String, Pod> pods = RealCluster.agentPods(admin, namespace, lab.group(), nodes);

        // nodes[0]'s agent streams to the leader and reports its address on each network (and one outside both).
        RealCluster.Served reporter = RealCluster.connectServed(channel(leader), nodes.get(0),
                RealCluster.agentToken(plane, namespace, pods.get(nodes.get(0))));
        closing.add(reporter.agent());
        reporter.agent().send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder()
                .setMode(FencingMode.FENCING_MODE_WATCHDOG).putNetworkAddresses(N1, "198.18.3.1")
                .putNetworkAddresses(N2, "198.19.3.1").putNetworkAddresses("10.9.0.0/16", "10.9.0.1")).build());

        // nodes[1]'s agent streams to the follower, which never hears nodes[0]'s agent.
        RealCluster.Served onFollower = RealCluster.connectServed(channel(follower), nodes.get(1),
                RealCluster.agentToken(plane, namespace, pods.get(nodes.get(1))));
        closing.add(onFollower.agent());
        Member seenOnFollower = awaitSecondNetworkAddress(onFollower, nodes.get(0), Duration.ofSeconds(30));
        String port = seenOnFollower.getGossipAddress().replaceAll(".*:", "");
        assertThat(seenOnFollower.getGossipAddressesMap())
                .isEqualTo(Map.of(N1, "198.18.3.1:" + port, N2, "198.19.3.1:" + port));
        assertThat(GossipAddressAnnotation.of(admin.nodes().withName(nodes.get(0)).get()))
                .isEqualTo(N1 + "=198.18.3.1," + N2 + "=198.19.3.1");
        assertThat(follower.logLinesWith("event=node_annotation_patched")).as("only the leader writes").isEmpty();

        // The leader dies (and nodes[0]'s stream with it); a replica started afterwards tells nodes[2] at once.
        leader.kill();
        ControllerProcess c = lab.start("controller-c", lab.args());
        closing.add(c);
        RealCluster.Served onNew = RealCluster.connectServed(channel(c), nodes.get(2),
                RealCluster.agentToken(plane, namespace, pods.get(nodes.get(2))));
        closing.add(onNew.agent());
        Member seenOnNew = awaitSecondNetworkAddress(onNew, nodes.get(0), Duration.ofSeconds(10));
        assertThat(seenOnNew.getGossipAddressesMap())
                .isEqualTo(Map.of(N1, "198.18.3.1:" + port, N2, "198.19.3.1:" + port));
    }

    private ManagedChannel channel(ControllerProcess replica) {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", replica.grpcPort()).usePlaintext()
                .build();
        closing.add(() -> channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS));
        return channel;
    }

    // The member {@code peer} as the served agent last heard of it, once it has an address on the second network.
    private static Member awaitSecondNetworkAddress(RealCluster.Served served, String peer, Duration atMost) {
        Map<String, Member> members = new HashMap<>();
        served.full().getFull().getMembersList().forEach(m -> members.put(m.getName(), m));
        return await().atMost(atMost).until(() -> {
            served.agent().applyMemberChanges(members);
            return members.get(peer);
        }, m -> m != null && m.getGossipAddressesMap().containsKey(N2));
    }
}
