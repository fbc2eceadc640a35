package dev.fencing.nodemanager.config;

import java.io.File;
import java.time.Duration;
import java.util.Objects;

/**
 * How the AgentControl channel is secured (ARCHITECTURE §9). TLS is the default; agents always authenticate with
 * their projected ServiceAccount token, plaintext or not.
 *
 * @param insecurePlaintext   serve without TLS ({@code --insecure-plaintext}, local labs only; warned at start and at
 *                            every call)
 * @param tlsCa               CA bundle that verifies other replicas' serving certificates when a follower forwards
 *                            to the leader ({@code --tls-ca}); null: trust the serving certificate chain itself
 * @param agentCaSecret       Secret in the controller namespace whose {@code ca.crt} is mounted into agent pods as
 *                            their {@code --controller-ca} ({@code --agent-ca-secret}); empty: agents get none (only
 *                            with plaintext, or in tests)
 * @param agentServiceAccount ServiceAccount of the agent pods ({@code --agent-service-account}); empty: the
 *                            namespace's default
 * @param certReloadInterval  how often the serving certificate files are checked for a renewal
 */
public record AgentControlSecurity(boolean insecurePlaintext, File tlsCa, String agentCaSecret,
                                   String agentServiceAccount, Duration certReloadInterval) {

    /** Path of the agents' projected token (audience fencing-agent) inside agent pods. */
    public static final String AGENT_TOKEN_FILE = "/etc/fencing-agent/token/token";
    /** Path of the controller CA bundle inside agent pods. */
    public static final String AGENT_CA_FILE = "/etc/fencing-agent/ca/ca.crt";

    /** Validates. */
    public AgentControlSecurity {
        agentCaSecret = agentCaSecret == null ? "" : agentCaSecret;
        agentServiceAccount = agentServiceAccount == null ? "" : agentServiceAccount;
        Objects.requireNonNull(certReloadInterval, "certReloadInterval");
        if (certReloadInterval.isNegative() || certReloadInterval.isZero()) {
            throw new IllegalArgumentException("--tls-reload-interval must be positive");
        }
    }

    /** What the settings before this record meant: TLS when a certificate is given, else plaintext. */
    static AgentControlSecurity implied(File tlsCert) {
        return new AgentControlSecurity(tlsCert == null, null, "", "", Duration.ofSeconds(30));
    }
}
