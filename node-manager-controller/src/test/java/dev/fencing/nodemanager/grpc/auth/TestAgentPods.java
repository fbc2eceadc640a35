package dev.fencing.nodemanager.grpc.auth;

import static org.awaitility.Awaitility.await;

import dev.fencing.nodemanager.dependent.AgentDaemonSetFactory;
import dev.fencing.nodemanager.model.NodeLabels;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The kubelet and the API server's token authenticator for controller tests on the CRUD mock: creates an agent pod
 * of a group's DaemonSet on a node (as the DaemonSet controller would), issues projected tokens for pods, and
 * answers TokenReviews for the tokens it issued (anything else: not authenticated).
 */
public final class TestAgentPods {

    /** The claims a token was issued with. */
    public record Claims(String namespace, String pod, String uid, String node, Instant expiresAt) {
    }

    private final KubernetesClient client;
    private final String namespace;
    private final Map<String, Claims> issued = new ConcurrentHashMap<>();
    private final AtomicLong serial = new AtomicLong();

    /** Installs the TokenReview answer on {@code server}. */
    public TestAgentPods(KubernetesMockServer server, KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
        server.expect().post().withPath("/apis/authentication.k8s.io/v1/tokenreviews")
                .andReply(201, request -> review(client.getKubernetesSerialization()
                        .unmarshal(request.getUtf8Body(), TokenReview.class)))
                .always();
    }

    private TokenReview review(TokenReview request) {
        Claims claims = issued.get(request.getSpec().getToken());
        boolean audienceOk = request.getSpec().getAudiences() != null
                && request.getSpec().getAudiences().contains(TokenReviewer.AUDIENCE);
        if (claims == null || !audienceOk || !Instant.now().isBefore(claims.expiresAt())) {
            return new TokenReviewBuilder().withNewStatus().withAuthenticated(false)
                    .withError("invalid bearer token").endStatus().build();
        }
        return new TokenReviewBuilder().withNewStatus().withAuthenticated(true)
                .withAudiences(TokenReviewer.AUDIENCE)
                .withNewUser().withUsername("system:serviceaccount:" + claims.namespace() + ":fencing-agent")
                .withExtra(Map.of(AgentAuthenticator.POD_NAME, List.of(claims.pod()),
                        AgentAuthenticator.POD_UID, List.of(claims.uid()),
                        AgentAuthenticator.NODE_NAME, List.of(claims.node())))
                .endUser().endStatus().build();
    }

    /**
     * The token of {@code node}'s agent pod: waits until the node's group has its DaemonSet, creates the pod
     * (once), and issues a token valid for an hour.
     */
    public String token(String node) {
        Pod pod = agentPod(node);
        return issue(new Claims(namespace, pod.getMetadata().getName(), pod.getMetadata().getUid(), node,
                Instant.now().plus(Duration.ofHours(1))));
    }

    /** The agent pod of {@code node}, created as the DaemonSet controller would once the DaemonSet exists. */
    public Pod agentPod(String node) {
        Node n = client.nodes().withName(node).get();
        String group = n.getMetadata().getLabels().get(NodeLabels.GROUP);
        String dsName = AgentDaemonSetFactory.name(group);
        DaemonSet ds = await().atMost(Duration.ofSeconds(10)).until(
                () -> client.apps().daemonSets().inNamespace(namespace).withName(dsName).get(),
                d -> d != null);
        String name = dsName + "-" + node;
        Pod existing = client.pods().inNamespace(namespace).withName(name).get();
        if (existing != null) {
            return existing;
        }
        return client.pods().inNamespace(namespace).resource(new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(namespace).withUid(UUID.randomUUID().toString())
                    .addNewOwnerReference().withApiVersion("apps/v1").withKind("DaemonSet").withName(dsName)
                        .withUid(ds.getMetadata().getUid()).withController(true).endOwnerReference()
                .endMetadata()
                .withNewSpec().withNodeName(node).endSpec()
                .build()).create();
    }

    /** Issues a token with arbitrary claims (forged-identity tests); the review vouches for exactly these. */
    public String issue(Claims claims) {
        String payload = "{\"exp\":" + claims.expiresAt().getEpochSecond() + ",\"n\":" + serial.incrementAndGet()
                + "}";
        String token = "eyJhbGciOiJub25lIn0." + Base64.getUrlEncoder().withoutPadding()
                .encodeToString(payload.getBytes(StandardCharsets.UTF_8)) + ".test";
        issued.put(token, claims);
        return token;
    }
}
