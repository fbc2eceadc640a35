package dev.fencing.e2e.controlplane;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The lab's stand-in for the API server's ServiceAccount token authenticator (until the lab runs a real API server):
 * issues projected-token look-alikes bound to an agent pod and answers {@code TokenReview}s for exactly the tokens it
 * issued, with the pod and node claims in the user extra, as a real API server does for audience
 * {@code fencing-agent}.
 */
final class LabTokenAuthority {

    static final String AUDIENCE = "fencing-agent";
    private static final String TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews";

    /** What a token vouches for. */
    record Claims(String namespace, String serviceAccount, String pod, String podUid, String node,
                  Instant expiresAt) {
    }

    private final Map<String, Claims> issued = new ConcurrentHashMap<>();
    private final SecureRandom random = new SecureRandom();

    /** A new token for {@code claims}. */
    String issue(Claims claims) {
        byte[] signature = new byte[24];
        random.nextBytes(signature);
        String payload = "{\"exp\":" + claims.expiresAt().getEpochSecond() + ",\"aud\":[\"" + AUDIENCE + "\"]}";
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String token = b64.encodeToString("{\"alg\":\"lab\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(payload.getBytes(StandardCharsets.UTF_8)) + "."
                + HexFormat.of().formatHex(signature);
        issued.put(token, claims);
        return token;
    }

    /** The review's answer: authenticated only for an issued, unexpired token asked for {@value #AUDIENCE}. */
    TokenReview review(TokenReview request) {
        Claims claims = request.getSpec() == null ? null : issued.get(request.getSpec().getToken());
        List<String> audiences = request.getSpec() == null ? null : request.getSpec().getAudiences();
        if (claims == null || audiences == null || !audiences.contains(AUDIENCE)
                || !Instant.now().isBefore(claims.expiresAt())) {
            return new TokenReviewBuilder().withNewStatus().withAuthenticated(false)
                    .withError("invalid bearer token").endStatus().build();
        }
        return new TokenReviewBuilder().withNewStatus().withAuthenticated(true).withAudiences(AUDIENCE)
                .withNewUser()
                .withUsername("system:serviceaccount:" + claims.namespace() + ":" + claims.serviceAccount())
                .withExtra(Map.of("authentication.kubernetes.io/pod-name", List.of(claims.pod()),
                        "authentication.kubernetes.io/pod-uid", List.of(claims.podUid()),
                        "authentication.kubernetes.io/node-name", List.of(claims.node())))
                .endUser().endStatus().build();
    }

    /** The CRUD mock, except that a created TokenReview is answered by this authority instead of being stored. */
    KubernetesCrudDispatcher dispatcher(KubernetesSerialization serialization) {
        return new KubernetesCrudDispatcher() {
            @Override
            public MockResponse handleCreate(RecordedRequest request) {
                if (!request.getPath().startsWith(TOKEN_REVIEWS)) {
                    return super.handleCreate(request);
                }
                TokenReview answer = review(serialization.unmarshal(request.getUtf8Body(), TokenReview.class));
                return new MockResponse().setResponseCode(201).addHeader("Content-Type", "application/json")
                        .setBody(serialization.asJson(answer));
            }
        };
    }
}
