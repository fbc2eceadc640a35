package dev.fencing.agent.control;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's channel to the controller: TLS verified against the {@code --controller-ca} bundle for the
 * controller's server name (or, explicitly, plaintext, logged at every connect), and the projected ServiceAccount
 * token attached to every call ({@link ServiceAccountTokenCredentials}).
 */
public final class ControllerChannels {

    private static final Logger LOG = LoggerFactory.getLogger(ControllerChannels.class);

    private ControllerChannels() {
    }

    /**
     * Opens the channel (it connects lazily).
     *
     * @throws IllegalArgumentException when the CA bundle cannot be read or parsed (the message names the file)
     */
    public static ManagedChannel open(ControllerEndpoint endpoint, String nodeName, Duration keepAlive) {
        ChannelCredentials credentials;
        if (endpoint.insecurePlaintext()) {
            credentials = InsecureChannelCredentials.create();
        } else {
            try {
                credentials = TlsChannelCredentials.newBuilder()
                        .trustManager(endpoint.caBundle().orElseThrow().toFile()).build();
            } catch (IOException | RuntimeException e) {
                throw new IllegalArgumentException("--controller-ca " + endpoint.caBundle().orElseThrow()
                        + ": cannot read a PEM CA bundle: " + e.getMessage(), e);
            }
        }
        NettyChannelBuilder builder = NettyChannelBuilder.forTarget(endpoint.target(), credentials)
                .keepAliveTime(keepAlive.toSeconds(), TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(true)
                .intercept(new Identity(endpoint, nodeName));
        if (!endpoint.insecurePlaintext()) {
            // The authority is what the certificate is verified against (SNI and host name check).
            builder.overrideAuthority(endpoint.effectiveServerName());
        }
        return builder.build();
    }

    /**
     * What to tell the operator about a failed stream, beyond its status: a TLS problem names the likely flag, a
     * refused identity says so. Empty when there is nothing to add.
     */
    public static String hint(Status status, boolean insecurePlaintext) {
        for (Throwable t = status.getCause(); t != null; t = t.getCause()) {
            if (t instanceof SSLException || t instanceof GeneralSecurityException) {
                return "TLS handshake with the controller failed (" + t.getMessage() + "): check --controller-ca "
                        + "and --controller-server-name against the controller's certificate";
            }
        }
        return switch (status.getCode()) {
            case UNAUTHENTICATED -> "the controller did not accept this agent's token (--token-file)";
            case PERMISSION_DENIED -> "the controller refused this agent's identity for this node";
            case UNAVAILABLE -> insecurePlaintext ? "if the controller serves TLS, drop --insecure-plaintext and "
                    + "pass --controller-ca" : "";
            default -> "";
        };
    }

    /** Attaches the token to every call and, without TLS, says so at every connect. */
    private static final class Identity implements ClientInterceptor {
        private final ControllerEndpoint endpoint;
        private final String nodeName;
        private final ServiceAccountTokenCredentials token;

        Identity(ControllerEndpoint endpoint, String nodeName) {
            this.endpoint = endpoint;
            this.nodeName = nodeName;
            this.token = new ServiceAccountTokenCredentials(endpoint.tokenFile());
        }

        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options,
                                                     Channel next) {
            if (endpoint.insecurePlaintext()) {
                LOG.warn("event=controller_connect_plaintext node={} target={} reason=\"--insecure-plaintext: the "
                        + "token, config and gossip keys cross the network unencrypted\"", nodeName,
                        endpoint.target());
            }
            return next.newCall(method, options.withCallCredentials(token));
        }
    }
}
