package dev.fencing.nodemanager.grpc.auth;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.proto.nodemanager.v1.AgentControlGrpc;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class AgentAuthInterceptorTest {

    /**
     * A flood of refused calls is one log line per status code per interval, carrying the count of refusals it stands
     * for and how many the quiet period hid; the counts are kept for every call.
     */
    @Test
    void aFloodOfRefusedCallsIsOneLinePerStatusPerIntervalWithTheCounts() {
        AtomicLong nanos = new AtomicLong(1_000);
        RefusedCalls refused = new RefusedCalls(nanos::get);
        assertThat(refused.refused(Status.Code.UNAUTHENTICATED)).isEqualTo(new RefusedCalls.Line(1, 0));
        for (int i = 0; i < 99; i++) {
            assertThat(refused.refused(Status.Code.UNAUTHENTICATED)).isNull();
        }
        assertThat(refused.refused(Status.Code.PERMISSION_DENIED)).as("another status has its own line")
                .isEqualTo(new RefusedCalls.Line(1, 0));
        nanos.addAndGet(RefusedCalls.LOG_INTERVAL.toNanos());
        assertThat(refused.refused(Status.Code.UNAUTHENTICATED)).isEqualTo(new RefusedCalls.Line(101, 99));
        assertThat(refused.refused(Status.Code.UNAUTHENTICATED)).isNull();
        assertThat(refused.total(Status.Code.UNAUTHENTICATED)).isEqualTo(102);
        assertThat(refused.total(Status.Code.UNAVAILABLE)).isZero();
    }

    /** Every refused call is counted by its status, the refusal of the namespace check included. */
    @Test
    void everyRefusedCallIsCountedByItsStatus() throws Exception {
        Instant now = Instant.parse("2026-11-23T10:00:00Z");
        AgentAuthenticator authenticator = new AgentAuthenticator(token -> token.startsWith("other-namespace")
                ? new TokenReviewer.Review(true, "system:serviceaccount:other:fencing-agent",
                        Map.of(AgentAuthenticator.POD_NAME, List.of("p"), AgentAuthenticator.POD_UID, List.of("u")),
                        "")
                : new TokenReviewer.Review(false, "", Map.of(), "invalid bearer token"), () -> now,
                Duration.ofSeconds(60));
        AgentAuthInterceptor interceptor = new AgentAuthInterceptor(authenticator, false, "fencing", "",
                new RefusedCalls(() -> 0));
        String name = InProcessServerBuilder.generateName();
        Server server = InProcessServerBuilder.forName(name).addService(ServerInterceptors.intercept(
                new AgentControlGrpc.AgentControlImplBase() { }, interceptor)).build().start();
        ManagedChannel channel = InProcessChannelBuilder.forName(name).build();
        try {
            for (int i = 0; i < 20; i++) {
                assertThat(connect(channel, "made-up-" + i)).isEqualTo(Status.Code.UNAUTHENTICATED);
            }
            assertThat(connect(channel, "other-namespace")).isEqualTo(Status.Code.PERMISSION_DENIED);
            assertThat(interceptor.refusedCalls(Status.Code.UNAUTHENTICATED)).isEqualTo(20);
            assertThat(interceptor.refusedCalls(Status.Code.PERMISSION_DENIED)).isEqualTo(1);
        } finally {
            channel.shutdownNow();
            server.shutdownNow();
        }
    }

    /** One budget per host: the ports of a pod's connections do not give it more reviews. */
    @Test
    void reviewsAreBudgetedByTheCallersHostNotItsPort() throws Exception {
        InetAddress pod = InetAddress.getByName("10.244.3.17");
        assertThat(AgentAuthInterceptor.host(new InetSocketAddress(pod, 40000)))
                .isEqualTo(AgentAuthInterceptor.host(new InetSocketAddress(pod, 40001))).isEqualTo("10.244.3.17");
        assertThat(AgentAuthInterceptor.host(new InetSocketAddress(InetAddress.getByName("fd00::17"), 1)))
                .isEqualTo("fd00:0:0:0:0:0:0:17");
    }

    private static Status.Code connect(ManagedChannel channel, String token) throws Exception {
        CompletableFuture<Status.Code> closed = new CompletableFuture<>();
        List<ControllerMessage> received = new CopyOnWriteArrayList<>();
        StreamObserver<AgentMessage> up = AgentControlGrpc.newStub(channel)
                .withCallCredentials(new BearerTokenCredentials(token)).connect(new StreamObserver<>() {
                    @Override
                    public void onNext(ControllerMessage value) {
                        received.add(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        closed.complete(Status.fromThrowable(t).getCode());
                    }

                    @Override
                    public void onCompleted() {
                        closed.complete(Status.Code.OK);
                    }
                });
        up.onNext(AgentMessage.getDefaultInstance());
        Status.Code code = closed.get(5, TimeUnit.SECONDS);
        assertThat(received).isEmpty();
        return code;
    }
}
