package dev.fencing.nodemanager.grpc.auth;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import java.util.concurrent.Executor;

/**
 * Sends a fixed bearer token with every call: a follower forwarding an agent's stream to the leader presents that
 * agent's own token, so the leader authenticates and authorizes the agent exactly as if it had dialed directly.
 */
public final class BearerTokenCredentials extends CallCredentials {

    private final String token;

    /** @param token sent as {@code authorization: Bearer <token>}; never logged */
    public BearerTokenCredentials(String token) {
        this.token = token;
    }

    @Override
    public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
        Metadata headers = new Metadata();
        headers.put(AgentAuthInterceptor.AUTHORIZATION, "Bearer " + token);
        applier.apply(headers);
    }

    @Override
    public String toString() {
        return "BearerTokenCredentials[token=<redacted>]";
    }
}
