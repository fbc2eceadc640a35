package dev.fencing.nodemanager.grpc.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Turns an agent's bearer token into an {@link AgentIdentity}: a {@link TokenReviewer} says whether the token is
 * valid for the {@code fencing-agent} audience, and the review's user extra names the pod and node the token is
 * bound to. Positive answers are cached (by the token's SHA-256) for {@code min(maxCacheAge, exp - now)}, so a
 * reconnect storm costs one review per agent and an expired token is never accepted from the cache. Refusals are not
 * cached: a pod that just started gets reviewed again on its next attempt.
 */
public final class AgentAuthenticator {

    static final String POD_NAME = "authentication.kubernetes.io/pod-name";
    static final String POD_UID = "authentication.kubernetes.io/pod-uid";
    static final String NODE_NAME = "authentication.kubernetes.io/node-name";
    private static final String SA_PREFIX = "system:serviceaccount:";
    private static final int MAX_CACHED = 100_000;
    /**
     * TokenReviews in flight at once. Refusals are not cached (a token may become valid), so without a bound every
     * call with a made-up token, from anyone who reaches the port, held a gRPC thread in a blocking review: 2000
     * calls on one connection made 2000 threads. Beyond the bound a call is refused UNAVAILABLE at once and the agent
     * retries with its backoff; a valid token is reviewed once a minute at most (cache).
     */
    static final int MAX_CONCURRENT_REVIEWS = 32;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final TokenReviewer reviewer;
    private final InstantSource clock;
    private final Duration maxCacheAge;
    private final Map<String, Cached> cache = new ConcurrentHashMap<>();
    private final java.util.concurrent.Semaphore reviews =
            new java.util.concurrent.Semaphore(MAX_CONCURRENT_REVIEWS);

    private record Cached(AgentIdentity identity, Instant until) {
    }

    /**
     * @param maxCacheAge longest a positive review is reused (e.g. 60 s)
     */
    public AgentAuthenticator(TokenReviewer reviewer, InstantSource clock, Duration maxCacheAge) {
        this.reviewer = reviewer;
        this.clock = clock;
        this.maxCacheAge = maxCacheAge;
    }

    /**
     * The identity behind {@code token}.
     *
     * @throws AgentAuthException UNAUTHENTICATED (missing, invalid or expired token, or not bound to a pod),
     *                            UNAVAILABLE (the API server could not be asked)
     */
    public AgentIdentity authenticate(String token) throws AgentAuthException {
        if (token == null || token.isBlank()) {
            throw new AgentAuthException(Status.UNAUTHENTICATED.withDescription("no bearer token: the agent sends "
                    + "its projected ServiceAccount token (audience " + TokenReviewer.AUDIENCE + ", --token-file)"));
        }
        Instant now = clock.instant();
        Instant expiresAt = expiry(token);
        if (expiresAt != null && !now.isBefore(expiresAt)) {
            throw new AgentAuthException(Status.UNAUTHENTICATED.withDescription("token expired at " + expiresAt));
        }
        String key = sha256(token);
        Cached cached = cache.get(key);
        if (cached != null && now.isBefore(cached.until())) {
            return cached.identity();
        }
        TokenReviewer.Review review;
        if (!reviews.tryAcquire()) {
            throw new AgentAuthException(Status.UNAVAILABLE.withDescription("too many token reviews in progress ("
                    + MAX_CONCURRENT_REVIEWS + "); retry"));
        }
        try {
            review = reviewer.review(token);
        } catch (TokenReviewer.TokenReviewUnavailableException e) {
            throw new AgentAuthException(Status.UNAVAILABLE.withDescription("cannot review the token now ("
                    + e.getMessage() + "); retry"));
        } finally {
            reviews.release();
        }
        if (!review.authenticated()) {
            throw new AgentAuthException(Status.UNAUTHENTICATED.withDescription("token rejected by TokenReview"
                    + (review.error().isEmpty() ? "" : ": " + review.error())));
        }
        AgentIdentity identity = identity(review, token, expiresAt);
        Instant until = now.plus(maxCacheAge);
        if (expiresAt != null && expiresAt.isBefore(until)) {
            until = expiresAt;
        }
        if (cache.size() >= MAX_CACHED) {
            evictExpired(now);
        }
        if (cache.size() < MAX_CACHED) {
            cache.put(key, new Cached(identity, until));
        }
        return identity;
    }

    private static AgentIdentity identity(TokenReviewer.Review review, String token, Instant expiresAt)
            throws AgentAuthException {
        if (!review.username().startsWith(SA_PREFIX)) {
            throw new AgentAuthException(Status.UNAUTHENTICATED.withDescription("token is not a ServiceAccount "
                    + "token"));
        }
        String[] sa = review.username().substring(SA_PREFIX.length()).split(":", 2);
        String pod = first(review.extra(), POD_NAME);
        String uid = first(review.extra(), POD_UID);
        if (sa.length != 2 || pod.isEmpty() || uid.isEmpty()) {
            throw new AgentAuthException(Status.UNAUTHENTICATED.withDescription("token is not bound to a pod "
                    + "(use a projected serviceAccountToken volume, not a Secret-based token)"));
        }
        return new AgentIdentity(sa[0], sa[1], pod, uid, first(review.extra(), NODE_NAME), token, expiresAt);
    }

    private static String first(Map<String, List<String>> extra, String key) {
        List<String> values = extra.get(key);
        return values == null || values.isEmpty() || values.get(0) == null ? "" : values.get(0);
    }

    private void evictExpired(Instant now) {
        for (Iterator<Cached> it = cache.values().iterator(); it.hasNext(); ) {
            if (!now.isBefore(it.next().until())) {
                it.remove();
            }
        }
    }

    /** The {@code exp} claim of a JWT, read without verifying (the TokenReview verifies), or null. */
    static Instant expiry(String token) {
        String[] parts = token.split("\\.");
        if (parts.length != 3) {
            return null;
        }
        try {
            JsonNode claims = JSON.readTree(Base64.getUrlDecoder().decode(parts[1]));
            JsonNode exp = claims.path("exp");
            return exp.canConvertToLong() ? Instant.ofEpochSecond(exp.asLong()) : null;
        } catch (java.io.IOException | IllegalArgumentException e) {
            return null;
        }
    }

    private static String sha256(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }
}
