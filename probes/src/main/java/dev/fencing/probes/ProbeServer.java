package dev.fencing.probes;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * {@code GET /healthz} (liveness) and {@code GET /readyz} (readiness) for the kubelet: 200 "ok", or 503 with the
 * reason ({@link ProbeAnswer}); {@code HEAD} too; 404, 405 and 400 for anything else.
 *
 * <p>An {@link EndpointServer}, so no client can keep the probes from being answered, which would get the process
 * restarted: one thread serves every connection without blocking on any of them, each connection gets
 * {@value #TIMEOUT_MILLIS} ms from its accept to send its request head (at most {@value #MAX_REQUEST_BYTES} bytes) and
 * read the answer, and at most {@value #MAX_CONNECTIONS} are open: one more closes the oldest still without a
 * request. A kubelet's probe, which sends its request at once, is answered in the same round of the selector. Idle,
 * the thread waits in the selector with no timer.
 */
public final class ProbeServer {

    /** From accept to the last byte of the answer. */
    public static final int TIMEOUT_MILLIS = 2_000;
    /** Longest request head read; anything longer is answered 400. */
    public static final int MAX_REQUEST_BYTES = EndpointServer.MAX_REQUEST_BYTES;
    /** Open connections at most; one more closes the oldest. */
    public static final int MAX_CONNECTIONS = 64;

    private ProbeServer() {}

    /**
     * The probe listener, not started.
     *
     * @param address   the address to listen on; null for every address of the host (or pod)
     * @param port      TCP port; 0 picks a free one (see {@link EndpointServer#port()})
     * @param liveness  answers {@code /healthz}
     * @param readiness answers {@code /readyz}
     */
    public static EndpointServer create(InetAddress address, int port, Probe liveness, Probe readiness) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("probe port must be 0..65535, got " + port);
        }
        return EndpointServer.builder("probe")
                .address(address)
                .port(port)
                .timeout(Duration.ofMillis(TIMEOUT_MILLIS))
                .maxConnections(MAX_CONNECTIONS)
                .endpoint("/healthz", probe(liveness, "unhealthy", "liveness"))
                .endpoint("/readyz", probe(readiness, "not ready", "readiness"))
                .build();
    }

    /** An endpoint that answers with {@code probe}'s {@link ProbeAnswer}. */
    public static EndpointServer.Endpoint probe(Probe probe, String failed, String what) {
        Objects.requireNonNull(probe, what);
        return request -> {
            ProbeAnswer a = ProbeAnswer.of(probe, failed);
            return EndpointServer.Response.text(a.status(), a.body());
        };
    }
}
