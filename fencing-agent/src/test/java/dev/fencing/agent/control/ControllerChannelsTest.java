package dev.fencing.agent.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.proto.nodemanager.v1.AgentControlGrpc;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's controller channel against a TLS AgentControl server on loopback. */
class ControllerChannelsTest {

    private static final String SERVER_NAME = "node-manager-controller.fencing.svc";

    @TempDir
    Path dir;
    private Server server;
    private Path ca;
    private Path otherCa;
    private Path token;
    private final List<String> authorizations = new CopyOnWriteArrayList<>();
    private final List<ManagedChannel> channels = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        TestPki pki = new TestPki("fencing-ca", 7);
        ca = pki.writeCa(dir.resolve("ca.crt"));
        otherCa = new TestPki("someone-else", 8).writeCa(dir.resolve("other-ca.crt"));
        Path[] serving = pki.issue(dir, "tls", SERVER_NAME);
        token = Files.writeString(dir.resolve("token"), "token-1");
        ServerInterceptor recordAuthorization = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                              ServerCallHandler<Q, R> next) {
                authorizations.add(String.valueOf(headers.get(ServiceAccountTokenCredentials.AUTHORIZATION)));
                return next.startCall(call, headers);
            }
        };
        AgentControlGrpc.AgentControlImplBase answering = new AgentControlGrpc.AgentControlImplBase() {
            @Override
            public StreamObserver<AgentMessage> connect(StreamObserver<ControllerMessage> out) {
                out.onNext(ControllerMessage.newBuilder().setEpoch("e").build());
                return new StreamObserver<>() {
                    @Override
                    public void onNext(AgentMessage value) {
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                        out.onCompleted();
                    }
                };
            }
        };
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0),
                        TlsServerCredentials.create(serving[0].toFile(), serving[1].toFile()))
                .addService(ServerInterceptors.intercept(answering, recordAuthorization)).build().start();
    }

    @AfterEach
    void tearDown() throws Exception {
        channels.forEach(ManagedChannel::shutdownNow);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    private String target() {
        return "127.0.0.1:" + server.getPort();
    }

    /** OK when the server's first message arrived, else the status the call failed with. */
    private Status connectOnce(ControllerEndpoint endpoint) throws Exception {
        ManagedChannel channel = ControllerChannels.open(endpoint, "node-a", Duration.ofSeconds(30));
        channels.add(channel);
        CompletableFuture<Status> result = new CompletableFuture<>();
        StreamObserver<AgentMessage> requests = AgentControlGrpc.newStub(channel).connect(new StreamObserver<>() {
            @Override
            public void onNext(ControllerMessage value) {
                result.complete(Status.OK);
            }

            @Override
            public void onError(Throwable t) {
                result.complete(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                result.complete(Status.INTERNAL.withDescription("completed without a message"));
            }
        });
        Status status = result.get(10, TimeUnit.SECONDS);
        requests.onCompleted();
        return status;
    }

    private ControllerEndpoint tls(Path caBundle, String serverName) {
        return new ControllerEndpoint(target(), Optional.of(caBundle), Optional.of(serverName), false, token);
    }

    @Test
    void theRightCaAndServerNameConnectAndTheTokenIsReReadOnEveryConnect() throws Exception {
        assertThat(connectOnce(tls(ca, SERVER_NAME)).isOk()).isTrue();
        Files.writeString(token, "token-2\n");
        assertThat(connectOnce(tls(ca, SERVER_NAME)).isOk()).isTrue();
        assertThat(authorizations).containsExactly("Bearer token-1", "Bearer token-2");
    }

    @Test
    void aControllerCertificateFromAnotherCaIsRefusedWithATlsHint() throws Exception {
        Status status = connectOnce(tls(otherCa, SERVER_NAME));
        assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(ControllerChannels.hint(status, false)).contains("TLS handshake").contains("--controller-ca");
        assertThat(authorizations).isEmpty();
    }

    @Test
    void aCertificateForAnotherNameIsRefusedWithATlsHint() throws Exception {
        Status status = connectOnce(tls(ca, "impostor.fencing.svc"));
        assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(ControllerChannels.hint(status, false)).contains("TLS handshake")
                .contains("--controller-server-name");
        assertThat(authorizations).isEmpty();
    }

    @Test
    void aPlaintextAgentCannotTalkToATlsControllerAndIsToldWhy() throws Exception {
        Status status = connectOnce(ControllerEndpoint.plaintext(target(), token));
        assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(ControllerChannels.hint(status, true)).contains("drop --insecure-plaintext");
        assertThat(authorizations).isEmpty();
    }

    @Test
    void aMissingTokenFileFailsTheConnectNamingTheFile() throws Exception {
        Files.delete(token);
        Status status = connectOnce(tls(ca, SERVER_NAME));
        assertThat(status.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(status.getDescription()).contains(token.toString()).contains("--token-file");
        assertThat(authorizations).isEmpty();
    }

    @Test
    void tlsWithoutACaBundleOrPlaintextWithACaIsACommandLineError() {
        assertThatThrownBy(() -> new ControllerEndpoint(target(), Optional.empty(), Optional.empty(), false, token))
                .hasMessageContaining("--controller-ca FILE is required");
        assertThatThrownBy(() -> new ControllerEndpoint(target(), Optional.of(ca), Optional.empty(), true, token))
                .hasMessageContaining("cannot be combined");
        assertThatThrownBy(() -> ControllerChannels.open(tls(dir.resolve("missing.crt"), SERVER_NAME), "node-a",
                Duration.ofSeconds(30))).hasMessageContaining("--controller-ca").hasMessageContaining("missing.crt");
    }

    @Test
    void theServerNameDefaultsToTheHostOfTheControllerAddress() {
        assertThat(ControllerEndpoint.tls("node-manager-controller.fencing.svc:9650", ca, token)
                .effectiveServerName()).isEqualTo("node-manager-controller.fencing.svc");
        assertThat(ControllerEndpoint.tls("[fd00::1]:9650", ca, token).effectiveServerName()).isEqualTo("fd00::1");
    }
}
