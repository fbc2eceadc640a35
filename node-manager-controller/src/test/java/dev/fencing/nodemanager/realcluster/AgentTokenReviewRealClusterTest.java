package dev.fencing.nodemanager.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.FencingWatchdog;
import dev.fencing.kubetest.RealControlPlane;
import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.dependent.AgentDaemonSetFactory;
import dev.fencing.nodemanager.grpc.TestAgent;
import dev.fencing.nodemanager.grpc.auth.AgentAuthException;
import dev.fencing.nodemanager.grpc.auth.AgentAuthenticator;
import dev.fencing.nodemanager.grpc.auth.AgentIdentity;
import dev.fencing.nodemanager.grpc.auth.KubernetesTokenReviewer;
import dev.fencing.nodemanager.grpc.auth.TokenReviewer;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Agent identity with real projected tokens: the real DaemonSet controller and scheduler put the group's agent pods
 * on registered Nodes, the API server issues tokens bound to those pods (TokenRequest), and the controller checks
 * them with a real TokenReview (audience {@value TokenReviewer#AUDIENCE}) and reads pod and node from the review's
 * user extra. The controller runs with the chart's privileges only.
 */
class AgentTokenReviewRealClusterTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.withControllers();
    private static final Duration TTL = Duration.ofMinutes(10);

    private static KubernetesClient admin;
    private static InProcessController controller;
    private static ManagedChannel channel;
    private static String namespace;
    private static String group;
    private static List<String> nodes;
    private final List<TestAgent> agents = new ArrayList<>();

    @BeforeAll
    static void setUp() throws Exception {
        RealControlPlane plane = KUBE.get();
        admin = plane.adminClient();
        controller = InProcessController.start(plane, "auth");
        namespace = controller.namespace();
        group = plane.uniqueName("auth");
        nodes = RealCluster.registerNodes(admin, group, 3, 1);
        admin.resource(RealCluster.watchdogGroup(group, new Fencing()
                .withWatchdog(new FencingWatchdog().withTimeout("60s")))).create();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", controller.manager().grpcPort()).usePlaintext().build();
        RealCluster.agentPods(admin, namespace, group, nodes);
        await().atMost(Duration.ofSeconds(30)).until(() -> controller.manager().distributor().ready(group));
    }

    @AfterAll
    static void tearDown() throws Exception {
        // Every controller on this shared API server manages every NodeGroup: leave none behind.
        admin.resources(dev.fencing.api.v1.NodeGroup.class).withName(group).delete();
        channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        controller.close();
    }

    @AfterEach
    void closeAgents() {
        agents.forEach(TestAgent::close);
    }

    private static Pod agentPod(String node) {
        return RealCluster.agentPods(admin, namespace, group, List.of(node)).get(node);
    }

    private static String podToken(Pod pod, String audience) {
        return KUBE.get().requestToken(namespace, RealCluster.AGENT_SERVICE_ACCOUNT, List.of(audience), TTL,
                pod.getMetadata().getName(), pod.getMetadata().getUid());
    }

    private static AgentAuthenticator authenticator() {
        return new AgentAuthenticator(new KubernetesTokenReviewer(controller.client()), InstantSource.system(),
                Duration.ofSeconds(60));
    }

    private TestAgent hello(String node, String token) {
        TestAgent a = TestAgent.connect(channel, node, token);
        agents.add(a);
        return a;
    }

    private static ControllerMessage first(TestAgent a) {
        return await().atMost(Duration.ofSeconds(20)).until(() -> a.received.poll(100, TimeUnit.MILLISECONDS),
                m -> m != null);
    }

    private static Status refusal(TestAgent a) throws Exception {
        Status status = a.closed.get(20, TimeUnit.SECONDS);
        assertThat(a.received).as("a refused agent gets no config and no keyring").isEmpty();
        return status;
    }

    @Test
    void aTokenBoundToTheNodesAgentPodNamesThatPodAndNodeAndGetsTheConfig() throws Exception {
        String node = nodes.get(0);
        Pod pod = agentPod(node);
        String token = podToken(pod, TokenReviewer.AUDIENCE);

        AgentIdentity identity = authenticator().authenticate(token);
        assertThat(identity.namespace()).isEqualTo(namespace);
        assertThat(identity.serviceAccount()).isEqualTo(RealCluster.AGENT_SERVICE_ACCOUNT);
        assertThat(identity.podName()).isEqualTo(pod.getMetadata().getName());
        assertThat(identity.podUid()).isEqualTo(pod.getMetadata().getUid());
        assertThat(identity.nodeName()).as("the node claim of the real TokenReview").isEqualTo(node);
        assertThat(identity.expiresAt()).isNotNull();

        ControllerMessage full = first(hello(node, token));
        assertThat(full.hasFull()).isTrue();
        assertThat(full.getFull().getNodeName()).isEqualTo(node);
        assertThat(full.getFull().hasKeyring()).isTrue();
    }

    @Test
    void aPodTokenForAnotherAudienceIsRejectedByTheTokenReview() throws Exception {
        String node = nodes.get(0);
        String apiToken = podToken(agentPod(node), RealControlPlane.SERVICE_ACCOUNT_ISSUER);

        assertThatThrownBy(() -> authenticator().authenticate(apiToken)).isInstanceOfSatisfying(
                AgentAuthException.class, e -> assertThat(e.status().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
        Status status = refusal(hello(node, apiToken));
        assertThat(status.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(status.getDescription()).contains("rejected by TokenReview");
    }

    @Test
    void theAgentPodTokenOfAnotherNodeCannotSayHelloAsThisNode() throws Exception {
        String token = podToken(agentPod(nodes.get(1)), TokenReviewer.AUDIENCE);
        Status status = refusal(hello(nodes.get(0), token));
        assertThat(status.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(status.getDescription()).contains("node " + nodes.get(1) + ", not on " + nodes.get(0));
    }

    @Test
    void aServiceAccountTokenBoundToNoPodIsRefused() throws Exception {
        String unbound = KUBE.get().requestToken(namespace, RealCluster.AGENT_SERVICE_ACCOUNT,
                List.of(TokenReviewer.AUDIENCE), TTL, null, null);
        Status status = refusal(hello(nodes.get(0), unbound));
        assertThat(status.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(status.getDescription()).contains("not bound to a pod");
    }

    @Test
    void aPodOfTheAgentServiceAccountThatIsNotTheGroupsAgentIsRefusedOnItsOwnNode() throws Exception {
        String node = nodes.get(0);
        Pod stranger = admin.pods().inNamespace(namespace).resource(new PodBuilder()
                .withNewMetadata().withName(KUBE.get().uniqueName("debug-shell")).endMetadata()
                .withNewSpec().withNodeName(node).withServiceAccountName(RealCluster.AGENT_SERVICE_ACCOUNT)
                    .withAutomountServiceAccountToken(false)
                    .addNewContainer().withName("shell").withImage("registry.example/shell:1").endContainer()
                .endSpec().build()).create();
        Status status = refusal(hello(node, podToken(stranger, TokenReviewer.AUDIENCE)));
        assertThat(status.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(status.getDescription()).contains("not a pod of DaemonSet " + AgentDaemonSetFactory.name(group));
        RealCluster.forceDelete(admin, stranger);
    }

    @Test
    void tokensOfADeletedAgentPodAreRefusedWhetherReviewedBeforeOrNot() throws Exception {
        String node = nodes.get(2);
        Pod pod = agentPod(node);
        String used = podToken(pod, TokenReviewer.AUDIENCE);
        String unused = podToken(pod, TokenReviewer.AUDIENCE);
        assertThat(first(hello(node, used)).hasFull()).isTrue();

        RealCluster.forceDelete(admin, pod);
        // The DaemonSet controller replaces the pod: same node, new name and UID.
        Map<String, Pod> replaced = await().atMost(Duration.ofSeconds(30)).until(
                () -> RealCluster.agentPods(admin, namespace, group, List.of(node)),
                m -> !m.get(node).getMetadata().getUid().equals(pod.getMetadata().getUid()));

        // Never reviewed: the API server itself refuses a token whose pod is gone.
        Status review = refusal(hello(node, unused));
        assertThat(review.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(review.getDescription()).contains("rejected by TokenReview");
        // Reviewed before (the positive review is cached): the hello check finds the pod gone.
        Status cached = refusal(hello(node, used));
        assertThat(cached.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(cached.getDescription()).contains("no longer exists");
        // The replacement pod's own token works.
        assertThat(first(hello(node, podToken(replaced.get(node), TokenReviewer.AUDIENCE))).hasFull()).isTrue();
    }
}
