package dev.fencing.nodemanager.grpc.auth;

import java.time.Instant;
import java.util.Objects;

/**
 * Who an authenticated AgentControl caller is, as the API server vouched for its projected ServiceAccount token.
 *
 * @param namespace      the ServiceAccount's (and the pod's) namespace
 * @param serviceAccount the ServiceAccount name
 * @param podName        the pod the token is bound to
 * @param podUid         that pod's UID
 * @param nodeName       the node the pod ran on when the token was issued (empty when the API server is older than
 *                       1.30 and adds no node claim)
 * @param token          the token itself, kept only to forward the caller's identity to the leader; never logged
 * @param expiresAt      the token's {@code exp}, or null when it carries none
 */
public record AgentIdentity(String namespace, String serviceAccount, String podName, String podUid, String nodeName,
                            String token, Instant expiresAt) {

    /** Validates. */
    public AgentIdentity {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(serviceAccount, "serviceAccount");
        Objects.requireNonNull(podName, "podName");
        Objects.requireNonNull(podUid, "podUid");
        Objects.requireNonNull(nodeName, "nodeName");
        Objects.requireNonNull(token, "token");
    }

    /** Never prints the token. */
    @Override
    public String toString() {
        return "AgentIdentity[pod=" + namespace + "/" + podName + ", uid=" + podUid + ", node=" + nodeName
                + ", serviceAccount=" + serviceAccount + ", expiresAt=" + expiresAt + "]";
    }
}
