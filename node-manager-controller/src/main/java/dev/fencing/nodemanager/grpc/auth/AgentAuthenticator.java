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
 * reconnect storm costs one review per agent and an expired token is never accepted from the cache. Refusals are
 * cached for {@link #REFUSAL_CACHE_AGE} only: a token replayed in a loop costs no review, and a token refused by a
 * transient cause is reviewed again seconds later. Both caches are keyed by the token, so one token's answer never
 * decides another's. Reviews of uncached tokens share a {@link ReviewBudget} split by remote address.
 */
public final class AgentAuthenticator {

    static final String POD_NAME = "authentication.kubernetes.io/pod-name";
    static final String POD_UID = "authentication.kubernetes.io/pod-uid";
    static final String NODE_NAME = "authentication.kubernetes.io/node-name";
    private static final String SA_PREFIX = "system:serviceaccount:";
    private static final int MAX_CACHED = 100_000;
    /**
     * How long a refusal is reused. Short, because a token may become valid (the API server may not know a new pod
     * yet) and the agent's next attempt must then succeed; long enough that a made-up token replayed in a loop costs
     * one review per period instead of one per call.
     */
    static final Duration REFUSAL_CACHE_AGE = Duration.ofSeconds(5);
    /** Refusals remembered at most: anyone can make up tokens, so this map is bounded smaller than the other. */
    private static final int MAX_REFUSALS_CACHED = 10_000;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final TokenReviewer reviewer;
    private final InstantSource clock;
    private final Duration maxCacheAge;
    private final Map<String, Cached> cache = new ConcurrentHashMap<>();
    private final Map<String, Refused> refusals = new ConcurrentHashMap<>();
    private final ReviewBudget reviews = new ReviewBudget();

    private record Cached(AgentIdentity identity, Instant until) {
    }

    private record Refused(Status status, Instant until) {
    }

    /**
     * @param maxCacheAge longest a positive review is reused (e.g. 60 s)
     */
    public AgentAuthenticator(TokenReviewer reviewer, InstantSource clock, Duration maxCacheAge) {
        this.reviewer = reviewer;
        this.clock = clock;
        this.maxCacheAge = maxCacheAge;
    }

    /** Like {@link #authenticate(String, String)} for a caller without a network address (tests, tools). */
    public AgentIdentity authenticate(String token) throws AgentAuthException {
        return authenticate(token, "");
    }

    /**
     * The identity behind {@code token}.
     *
     * @param peer the caller's network address (its host, not the port): the reviews of uncached tokens one address
     *             may have in flight are bounded ({@link ReviewBudget#PER_PEER})
     * @throws AgentAuthException UNAUTHENTICATED (missing, invalid or expired token, or not bound to a pod),
     *                            UNAVAILABLE (the API server could not be asked, or too many reviews in progress)
     */
    public AgentIdentity authenticate(String token, String peer) throws AgentAuthException {
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
        Refused refused = refusals.get(key);
        if (refused != null && now.isBefore(refused.until())) {
            throw new AgentAuthException(refused.status());
        }
        AgentIdentity identity;
        try {
            identity = identity(review(token, peer), token, expiresAt);
        } catch (AgentAuthException e) {
            if (e.status().getCode() == Status.Code.UNAUTHENTICATED) {
                remember(refusals, MAX_REFUSALS_CACHED, key, new Refused(e.status(), now.plus(REFUSAL_CACHE_AGE)),
                        Refused::until, now);
            }
            throw e;
        }
        Instant until = now.plus(maxCacheAge);
        if (expiresAt != null && expiresAt.isBefore(until)) {
            until = expiresAt;
        }
        remember(cache, MAX_CACHED, key, new Cached(identity, until), Cached::until, now);
        return identity;
    }

    private TokenReviewer.Review review(String token, String peer) throws AgentAuthException {
        reviews.acquire(peer);
        try {
            return reviewer.review(token);
        } catch (TokenReviewer.TokenReviewUnavailableException e) {
            throw new AgentAuthException(Status.UNAVAILABLE.withDescription("cannot review the token now ("
                    + e.getMessage() + "); retry"));
        } finally {
            reviews.release(peer);
        }
    }

    private static AgentIdentity identity(TokenReviewer.Review review, String token, Instant expiresAt)
            throws AgentAuthException {
        if (!review.authenticated()) {
            throw new AgentAuthException(Status.UNAUTHENTICATED.withDescription("token rejected by TokenReview"
                    + (review.error().isEmpty() ? "" : ": " + review.error())));
        }
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

    // Puts an answer unless the map is full of answers still valid (then the token is simply reviewed again).
    private static <V> void remember(Map<String, V> answers, int max, String key, V answer,
                                     java.util.function.Function<V, Instant> until, Instant now) {
        if (answers.size() >= max) {
            for (Iterator<V> it = answers.values().iterator(); it.hasNext(); ) {
                if (!now.isBefore(until.apply(it.next()))) {
                    it.remove();
                }
            }
        }
        if (answers.size() < max) {
            answers.put(key, answer);
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
