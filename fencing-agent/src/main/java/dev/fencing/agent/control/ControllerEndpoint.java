package dev.fencing.agent.control;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * Where the controller is and how the agent reaches it securely (ARCHITECTURE §9).
 *
 * @param target            {@code host:port} of AgentControl ({@code --controller})
 * @param caBundle          PEM CA bundle the controller's certificate must chain to ({@code --controller-ca}); empty
 *                          only with {@code insecurePlaintext}
 * @param serverName        the name the certificate must be valid for ({@code --controller-server-name}); empty: the
 *                          host of {@code target}
 * @param insecurePlaintext no TLS ({@code --insecure-plaintext}, local labs; logged at every connect)
 * @param tokenFile         the projected ServiceAccount token (audience fencing-agent), re-read on every connect
 */
public record ControllerEndpoint(String target, Optional<Path> caBundle, Optional<String> serverName,
                                 boolean insecurePlaintext, Path tokenFile) {

    /** Default path of the projected token inside the agent pod (the controller's DaemonSet mounts it there). */
    public static final Path DEFAULT_TOKEN_FILE = Path.of("/etc/fencing-agent/token/token");

    /** Validates: TLS needs a CA bundle; plaintext takes none. */
    public ControllerEndpoint {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(caBundle, "caBundle");
        Objects.requireNonNull(serverName, "serverName");
        Objects.requireNonNull(tokenFile, "tokenFile");
        if (!insecurePlaintext && caBundle.isEmpty()) {
            throw new IllegalArgumentException("--controller-ca FILE is required (the controller is verified "
                    + "against it); --insecure-plaintext turns TLS off for a local lab");
        }
        if (insecurePlaintext && (caBundle.isPresent() || serverName.isPresent())) {
            throw new IllegalArgumentException("--insecure-plaintext cannot be combined with --controller-ca or "
                    + "--controller-server-name");
        }
    }

    /** A TLS endpoint verified against {@code caBundle} for the host of {@code target}. */
    public static ControllerEndpoint tls(String target, Path caBundle, Path tokenFile) {
        return new ControllerEndpoint(target, Optional.of(caBundle), Optional.empty(), false, tokenFile);
    }

    /** A plaintext endpoint (labs and tests); the token is still sent. */
    public static ControllerEndpoint plaintext(String target, Path tokenFile) {
        return new ControllerEndpoint(target, Optional.empty(), Optional.empty(), true, tokenFile);
    }

    /** The name the controller's certificate is checked against. */
    public String effectiveServerName() {
        return serverName.orElseGet(() -> host(target));
    }

    static String host(String target) {
        if (target.startsWith("[")) {
            int end = target.indexOf(']');
            return end > 0 ? target.substring(1, end) : target;
        }
        int colon = target.lastIndexOf(':');
        return colon > 0 ? target.substring(0, colon) : target;
    }
}
