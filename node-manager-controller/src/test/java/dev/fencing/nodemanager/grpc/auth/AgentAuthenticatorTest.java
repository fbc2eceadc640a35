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

    @Test
    void refusalsAreNotCachedAndCarryTheReason() {
        authenticated = false;
        String token = jwt(now.get().plusSeconds(3600));
        assertThatThrownBy(() -> authenticator.authenticate(token)).hasMessageContaining("rejected by TokenReview")
                .hasMessageContaining("expired");
        assertThatThrownBy(() -> authenticator.authenticate(token)).isInstanceOf(AgentAuthException.class);
        assertThat(reviewed).hasSize(2);
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

    /** Reviews in flight are bounded: a flood of made-up tokens cannot hold an unbounded number of threads. */
    @Test
    void reviewsInFlightAreBoundedAndTheRestRefusedAtOnce() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
        AgentAuthenticator slow = new AgentAuthenticator(token -> {
            inFlight.incrementAndGet();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new TokenReviewer.Review(false, "", Map.of(), "invalid");
        }, now::get, Duration.ofSeconds(60));
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(
                AgentAuthenticator.MAX_CONCURRENT_REVIEWS);
        try {
            for (int i = 0; i < AgentAuthenticator.MAX_CONCURRENT_REVIEWS; i++) {
                String token = jwt(now.get().plusSeconds(3600 + i));
                pool.execute(() -> {
                    try {
                        slow.authenticate(token);
                    } catch (AgentAuthException expected) {
                        // refused once released
                    }
                });
            }
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                    .until(() -> inFlight.get() == AgentAuthenticator.MAX_CONCURRENT_REVIEWS);
            assertThatThrownBy(() -> slow.authenticate(jwt(now.get().plusSeconds(7200))))
                    .isInstanceOfSatisfying(AgentAuthException.class, e -> {
                        assertThat(e.status().getCode()).isEqualTo(io.grpc.Status.Code.UNAVAILABLE);
                        assertThat(e.status().getDescription()).contains("too many token reviews in progress");
                    });
            assertThat(inFlight.get()).isEqualTo(AgentAuthenticator.MAX_CONCURRENT_REVIEWS);
        } finally {
            release.countDown();
            pool.shutdown();
            assertThat(pool.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        }
        // Released: reviews run again.
        assertThatThrownBy(() -> slow.authenticate(jwt(now.get().plusSeconds(9000))))
                .hasMessageContaining("rejected by TokenReview");
    }
}
