package dev.fencing.nodemanager.grpc.auth;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatus;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;

/** {@link TokenReviewer} through {@code authentication.k8s.io/v1} TokenReviews (needs {@code create tokenreviews}). */
public final class KubernetesTokenReviewer implements TokenReviewer {

    private final KubernetesClient client;

    public KubernetesTokenReviewer(KubernetesClient client) {
        this.client = client;
    }

    @Override
    public Review review(String token) {
        TokenReview request = new TokenReviewBuilder()
                .withNewSpec().withToken(token).withAudiences(List.of(AUDIENCE)).endSpec()
                .build();
        TokenReview answer;
        try {
            answer = client.authentication().v1().tokenReviews().create(request);
        } catch (KubernetesClientException e) {
            // The message never contains the request body, so the token does not reach the log.
            throw new TokenReviewUnavailableException("TokenReview failed: HTTP " + e.getCode(), e);
        }
        TokenReviewStatus status = answer == null ? null : answer.getStatus();
        if (status == null) {
            return new Review(false, "", null, "the API server returned no TokenReview status");
        }
        boolean ok = Boolean.TRUE.equals(status.getAuthenticated())
                && (status.getAudiences() == null || status.getAudiences().isEmpty()
                        || status.getAudiences().contains(AUDIENCE));
        UserInfo user = status.getUser();
        return new Review(ok, user == null ? "" : user.getUsername(), user == null ? null : user.getExtra(),
                status.getError());
    }
}
