package dev.fencing.nodemanager.grpc.auth;

import java.util.List;
import java.util.Map;

/**
 * Asks the Kubernetes API whether a bearer token is valid for the {@value #AUDIENCE} audience ({@code TokenReview}).
 * The seam between {@link AgentAuthenticator} and the API server.
 */
public interface TokenReviewer {

    /** The audience of the agents' projected ServiceAccount tokens. */
    String AUDIENCE = "fencing-agent";

    /**
     * Reviews {@code token}.
     *
     * @throws TokenReviewUnavailableException when the API server could not be asked
     */
    Review review(String token);

    /**
     * The API server's answer.
     *
     * @param authenticated true when the token is valid for {@value #AUDIENCE}
     * @param username      {@code system:serviceaccount:<namespace>:<name>} for a ServiceAccount token
     * @param extra         the review's user extra (pod name, pod uid, node name claims)
     * @param error         the API server's reason when not authenticated (may be empty)
     */
    record Review(boolean authenticated, String username, Map<String, List<String>> extra, String error) {
        /** Copies. */
        public Review {
            username = username == null ? "" : username;
            extra = extra == null ? Map.of() : Map.copyOf(extra);
            error = error == null ? "" : error;
        }
    }

    /** The API server did not answer the review (network, 5xx, RBAC): the caller is told to retry. */
    final class TokenReviewUnavailableException extends RuntimeException {
        /** @param message what failed */
        public TokenReviewUnavailableException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
