package dev.fencing.nodemanager.grpc.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class AgentAuthenticatorTest {

    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-23T10:00:00Z"));
    private final List<String> reviewed = new ArrayList<>();
    private boolean authenticated = true;
    private final AgentAuthenticator authenticator = new AgentAuthenticator(token -> {
        reviewed.add(token);
        return new TokenReviewer.Review(authenticated, "system:serviceaccount:fencing:fencing-agent",
                Map.of(AgentAuthenticator.POD_NAME, List.of("fencing-agent-workers-abcde"),
                        AgentAuthenticator.POD_UID, List.of("uid-1"),
                        AgentAuthenticator.NODE_NAME, List.of("workers-1")), authenticated ? "" : "expired");
    }, now::get, Duration.ofSeconds(60));

    private static String jwt(Instant exp) {
        return "eyJhbGciOiJSUzI1NiJ9." + Base64.getUrlEncoder().withoutPadding().encodeToString(
                ("{\"exp\":" + exp.getEpochSecond() + "}").getBytes(StandardCharsets.UTF_8)) + ".sig";
    }

    @Test
    void aPositiveReviewIsReusedForAMinuteButNeverPastTheTokensExpiry() throws Exception {
        String longLived = jwt(now.get().plusSeconds(3600));
        AgentIdentity id = authenticator.authenticate(longLived);
        assertThat(id.podName()).isEqualTo("fencing-agent-workers-abcde");
        assertThat(id.nodeName()).isEqualTo("workers-1");
        assertThat(id.namespace()).isEqualTo("fencing");
        authenticator.authenticate(longLived);
        assertThat(reviewed).hasSize(1);
        now.set(now.get().plusSeconds(61));
        authenticator.authenticate(longLived);
        assertThat(reviewed).hasSize(2);

        String shortLived = jwt(now.get().plusSeconds(10));
        authenticator.authenticate(shortLived);
        now.set(now.get().plusSeconds(10));
        assertThatThrownBy(() -> authenticator.authenticate(shortLived))
                .isInstanceOfSatisfying(AgentAuthException.class, e ->
                        assertThat(e.status().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
    }

    /**
     * A refusal is reused for a few seconds only (a token replayed in a loop costs no review each time, a token that
     * becomes valid is accepted seconds later), and only for that token.
     */
    @Test
    void refusalsAreReusedForAFewSecondsOnlyAndCarryTheReason() throws Exception {
        authenticated = false;
        String token = jwt(now.get().plusSeconds(3600));
        assertThatThrownBy(() -> authenticator.authenticate(token)).hasMessageContaining("rejected by TokenReview")
                .hasMessageContaining("expired");
        assertThatThrownBy(() -> authenticator.authenticate(token)).hasMessageContaining("rejected by TokenReview");
        assertThat(reviewed).hasSize(1);

        authenticated = true;
        String another = jwt(now.get().plusSeconds(3601));
        assertThat(authenticator.authenticate(another).nodeName()).as("another token is not refused with it")
                .isEqualTo("workers-1");
        now.set(now.get().plus(AgentAuthenticator.REFUSAL_CACHE_AGE));
        assertThat(authenticator.authenticate(token).nodeName()).isEqualTo("workers-1");
        assertThat(reviewed).containsExactly(token, another, token);
    }

    @Test
    void anApiServerThatCannotBeAskedIsNotRememberedAsARefusal() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean down = new java.util.concurrent.atomic.AtomicBoolean(true);
        AgentAuthenticator flaky = new AgentAuthenticator(token -> {
            if (down.get()) {
                throw new TokenReviewer.TokenReviewUnavailableException("connection refused", null);
            }
            return new TokenReviewer.Review(true, "system:serviceaccount:fencing:fencing-agent",
                    Map.of(AgentAuthenticator.POD_NAME, List.of("p"), AgentAuthenticator.POD_UID, List.of("u")), "");
        }, now::get, Duration.ofSeconds(60));
        String token = jwt(now.get().plusSeconds(3600));
        assertThatThrownBy(() -> flaky.authenticate(token)).isInstanceOfSatisfying(AgentAuthException.class,
                e -> assertThat(e.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        down.set(false);
        assertThat(flaky.authenticate(token).podName()).isEqualTo("p");
    }

    @Test
    void noTokenIsUnauthenticatedWithoutAskingTheApiServer() {
        assertThatThrownBy(() -> authenticator.authenticate(null)).hasMessageContaining("no bearer token");
        assertThatThrownBy(() -> authenticator.authenticate(" ")).hasMessageContaining("no bearer token");
        assertThat(reviewed).isEmpty();
    }

    @Test
    void theIdentityNeverPrintsItsToken() throws Exception {
        String token = jwt(now.get().plusSeconds(3600));
        assertThat(authenticator.authenticate(token).toString()).doesNotContain(token).contains("workers-1");
    }

    @Test
    void clientStringsCannotForgeLogFields() {
        assertThat(ClientText.escape("n1\" event=agent_connected\nforged")).isEqualTo(
                "n1\\\" event=agent_connected\\nforged");
        assertThat(ClientText.escape("x".repeat(300))).endsWith("...(300 chars)").hasSize(256 + 14);
        assertThat(ClientText.escape("\u0000é")).isEqualTo("\\u0000\\u00e9");
    }

    /**
     * A reviewer whose reviews of the tokens {@code held} accepts wait for {@code release} (counted in
     * {@code inFlight}) and refuse; any other token is a valid agent token, answered at once.
     */
    private AgentAuthenticator heldReviews(java.util.function.Predicate<String> held,
                                           java.util.concurrent.CountDownLatch release,
                                           java.util.concurrent.atomic.AtomicInteger inFlight) {
        return new AgentAuthenticator(token -> {
            if (!held.test(token)) {
                return new TokenReviewer.Review(true, "system:serviceaccount:fencing:fencing-agent",
                        Map.of(AgentAuthenticator.POD_NAME, List.of("fencing-agent-workers-abcde"),
                                AgentAuthenticator.POD_UID, List.of("uid-1"),
                                AgentAuthenticator.NODE_NAME, List.of("workers-1")), "");
            }
            inFlight.incrementAndGet();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new TokenReviewer.Review(false, "", Map.of(), "invalid");
        }, now::get, Duration.ofSeconds(60));
    }

    /**
     * Makes {@code calls} calls with made-up tokens, the i-th from {@code peer.apply(i)}, each on its own thread, and
     * waits until each is either held in review or refused; returns the refusals' status codes.
     */
    private List<Status.Code> flood(AgentAuthenticator target, int calls, java.util.function.IntFunction<String> peer,
                                    java.util.concurrent.atomic.AtomicInteger inFlight,
                                    java.util.concurrent.ExecutorService pool) {
        List<Status.Code> refused = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < calls; i++) {
            String token = "made-up-" + i;
            String from = peer.apply(i);
            pool.execute(() -> {
                try {
                    target.authenticate(token, from);
                } catch (AgentAuthException e) {
                    refused.add(e.status().getCode());
                }
            });
        }
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> inFlight.get() + refused.size() == calls);
        return refused;
    }

    /** Reviews in flight are bounded: a flood of made-up tokens cannot hold an unbounded number of threads. */
    @Test
    void reviewsInFlightAreBoundedAndTheRestRefusedAtOnce() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
        AgentAuthenticator slow = heldReviews(t -> t.startsWith("made-up-"), release, inFlight);
        int calls = 2 * ReviewBudget.MAX_IN_FLIGHT;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(calls);
        try {
            // From many addresses, so the bound in all is what refuses.
            List<Status.Code> refused = flood(slow, calls, i -> "10.0.0." + i, inFlight, pool);
            assertThat(inFlight.get()).isEqualTo(ReviewBudget.MAX_IN_FLIGHT);
            assertThat(refused).hasSize(calls - ReviewBudget.MAX_IN_FLIGHT).containsOnly(Status.Code.UNAVAILABLE);
            assertThatThrownBy(() -> slow.authenticate(jwt(now.get().plusSeconds(7200)), "10.0.1.1"))
                    .isInstanceOfSatisfying(AgentAuthException.class, e -> {
                        assertThat(e.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                        assertThat(e.status().getDescription()).contains("too many token reviews in progress");
                    });
        } finally {
            release.countDown();
            pool.shutdown();
            assertThat(pool.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        }
        // Released: reviews run again.
        assertThat(slow.authenticate(jwt(now.get().plusSeconds(9000)), "10.0.1.1").nodeName()).isEqualTo("workers-1");
    }

    /**
     * One pod that keeps many made-up tokens in review (each review is slow) gets a few slots, not all of them: an
     * agent connecting from its own node meanwhile (reconnect after the cache expired, a rotated token, a failover)
     * is reviewed and accepted. With one bound for all, the flood held all 32 and the agent was refused for as long
     * as it lasted.
     */
    @Test
    void aFloodOfMadeUpTokensFromOnePeerDoesNotKeepAnAgentFromBeingReviewed() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
        AgentAuthenticator target = heldReviews(t -> t.startsWith("made-up-"), release, inFlight);
        int calls = 2 * ReviewBudget.MAX_IN_FLIGHT;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(calls);
        try {
            List<Status.Code> refused = flood(target, calls, i -> "10.244.3.17", inFlight, pool);
            assertThat(refused).containsOnly(Status.Code.UNAVAILABLE);
            assertThat(inFlight.get()).as("reviews the flooding pod holds").isEqualTo(ReviewBudget.PER_PEER);

            AgentIdentity agent = target.authenticate(jwt(now.get().plusSeconds(3600)), "198.18.0.7");
            assertThat(agent.nodeName()).isEqualTo("workers-1");
        } finally {
            release.countDown();
            pool.shutdown();
            assertThat(pool.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        }
    }
}
