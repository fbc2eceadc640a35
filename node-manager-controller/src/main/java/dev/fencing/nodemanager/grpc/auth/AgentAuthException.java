package dev.fencing.nodemanager.grpc.auth;

import io.grpc.Status;

/** A caller was refused: {@code UNAUTHENTICATED}, {@code PERMISSION_DENIED} or {@code UNAVAILABLE}, with why. */
public final class AgentAuthException extends Exception {

    private final transient Status status;

    /** @param status the gRPC status the caller gets; its description is the reason (no secrets in it) */
    public AgentAuthException(Status status) {
        super(status.getCode() + ": " + status.getDescription(), null, false, false);
        this.status = status;
    }

    /** The status to close the call with. */
    public Status status() {
        return status;
    }
}
