package dev.fencing.nodemanager.grpc.auth;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Authenticates every AgentControl call before the service sees it: the {@code authorization: Bearer <token>}
 * header must hold a token the {@link AgentAuthenticator} accepts; otherwise the call is closed with
 * {@code UNAUTHENTICATED} (or {@code UNAVAILABLE} when the API server cannot be asked) and a log line says why: per
 * status code at most one per {@link RefusedCalls#LOG_INTERVAL}, with the count of refusals it stands for. The
 * caller's {@link AgentIdentity} is put in the gRPC {@link Context} ({@link #IDENTITY}) for the hello check. On a
 * plaintext listener ({@code --insecure-plaintext}) every call is logged as such.
 */
public final class AgentAuthInterceptor implements ServerInterceptor {

    private static final Logger LOG = LoggerFactory.getLogger(AgentAuthInterceptor.class);
    /** The authenticated caller of the current call. */
    public static final Context.Key<AgentIdentity> IDENTITY = Context.key("fencing-agent-identity");
    static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final String BEARER = "Bearer ";

    private final AgentAuthenticator authenticator;
    private final boolean plaintext;
    private final String namespace;
    private final String serviceAccount;
    private final RefusedCalls refused;

    /** @param plaintext the listener runs without TLS ({@code --insecure-plaintext}): warn at every call */
    public AgentAuthInterceptor(AgentAuthenticator authenticator, boolean plaintext) {
        this(authenticator, plaintext, null, "");
    }

    /**
     * @param namespace      the agents' namespace: a token of a pod in any other is refused here, before a stream
     *                       exists (any pod can get a token for the agents' audience, and each stream costs this
     *                       replica one of its {@code --max-agent-streams}); null: any namespace (tests)
     * @param serviceAccount the agents' ServiceAccount ({@code --agent-service-account}); empty: any in the namespace
     */
    public AgentAuthInterceptor(AgentAuthenticator authenticator, boolean plaintext, String namespace,
                                String serviceAccount) {
        this(authenticator, plaintext, namespace, serviceAccount, new RefusedCalls(System::nanoTime));
    }

    AgentAuthInterceptor(AgentAuthenticator authenticator, boolean plaintext, String namespace,
                         String serviceAccount, RefusedCalls refused) {
        this.authenticator = authenticator;
        this.plaintext = plaintext;
        this.namespace = namespace;
        this.serviceAccount = serviceAccount == null ? "" : serviceAccount;
        this.refused = refused;
    }

    /** Calls refused with {@code code} (UNAUTHENTICATED, UNAVAILABLE, PERMISSION_DENIED) since start. */
    public long refusedCalls(Status.Code code) {
        return refused.total(code);
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                      ServerCallHandler<Q, R> next) {
        SocketAddress peer = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        if (plaintext) {
            LOG.warn("event=agent_call_plaintext peer={} method={} reason=\"--insecure-plaintext: tokens and "
                    + "keys cross the network unencrypted\"", peer, call.getMethodDescriptor().getBareMethodName());
        }
        String header = headers.get(AUTHORIZATION);
        String token = header != null && header.regionMatches(true, 0, BEARER, 0, BEARER.length())
                ? header.substring(BEARER.length()).trim() : null;
        AgentIdentity identity;
        try {
            identity = authenticator.authenticate(token, host(peer));
        } catch (AgentAuthException e) {
            return refuse(call, peer, e.status());
        }
        if (namespace != null && (!namespace.equals(identity.namespace())
                || !serviceAccount.isEmpty() && !serviceAccount.equals(identity.serviceAccount()))) {
            return refuse(call, peer, Status.PERMISSION_DENIED.withDescription("ServiceAccount "
                    + identity.namespace() + "/" + identity.serviceAccount() + " is not the agents' (" + namespace
                    + "/" + (serviceAccount.isEmpty() ? "*" : serviceAccount) + ")"));
        }
        return Contexts.interceptCall(Context.current().withValue(IDENTITY, identity), call, headers, next);
    }

    private <Q, R> ServerCall.Listener<Q> refuse(ServerCall<Q, R> call, SocketAddress peer, Status status) {
        RefusedCalls.Line line = refused.refused(status.getCode());
        if (line != null) {
            LOG.warn("event=agent_refused peer={} status={} reason=\"{}\" refused_total={} not_logged={}", peer,
                    status.getCode(), ClientText.escape(status.getDescription()), line.total(), line.notLogged());
        }
        call.close(status, new Metadata());
        return new ServerCall.Listener<>() { };
    }

    /** The host of a remote address (its reviews share one budget whatever the port), or its text. */
    static String host(SocketAddress peer) {
        if (peer instanceof InetSocketAddress inet) {
            return inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString();
        }
        return String.valueOf(peer);
    }

}
