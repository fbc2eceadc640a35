package dev.fencing.nodemanager.config;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * How the controller renders the agent pods beyond image, resources and scheduling: the agent's HTTP port and how
 * the kubelet pulls the image.
 *
 * @param metricsPort      port of the agent's {@code /metrics}, {@code /healthz} and {@code /readyz} on every node
 *                         address (hostNetwork); 0: no HTTP server, so no probes ({@code --agent-metrics-port})
 * @param imagePullPolicy  {@code Always}, {@code IfNotPresent}, {@code Never}, or empty for the Kubernetes default
 *                         ({@code --agent-image-pull-policy})
 * @param imagePullSecrets Secrets in the controller's namespace the kubelet pulls the agent image with
 *                         ({@code --agent-image-pull-secret}, repeatable)
 */
public record AgentPodSettings(int metricsPort, String imagePullPolicy, List<String> imagePullSecrets) {

    /** Default agent HTTP port: next to the gossip port 9651, clear of MetalLB (7946) and Deckhouse's agent (8500). */
    public static final int DEFAULT_METRICS_PORT = 9652;
    /** The agent's HTTP port on, Kubernetes' pull policy, no pull secrets. */
    public static final AgentPodSettings DEFAULTS = new AgentPodSettings(DEFAULT_METRICS_PORT, "", List.of());

    private static final Set<String> PULL_POLICIES = Set.of("Always", "IfNotPresent", "Never");
    // A Secret name is a DNS subdomain (RFC 1123): what the API server would refuse in the DaemonSet otherwise.
    private static final Pattern SECRET_NAME =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    /** Validates, naming the flag. */
    public AgentPodSettings {
        Objects.requireNonNull(imagePullPolicy, "imagePullPolicy");
        imagePullSecrets = List.copyOf(imagePullSecrets);
        if (metricsPort < 0 || metricsPort > 65535) {
            throw new IllegalArgumentException("--agent-metrics-port " + metricsPort
                    + ": expected 1..65535, or 0 to run agents without their HTTP server (and without probes)");
        }
        if (!imagePullPolicy.isEmpty() && !PULL_POLICIES.contains(imagePullPolicy)) {
            throw new IllegalArgumentException("--agent-image-pull-policy " + imagePullPolicy
                    + ": expected Always, IfNotPresent or Never (empty: the Kubernetes default)");
        }
        for (String secret : imagePullSecrets) {
            if (secret.length() > 253 || !SECRET_NAME.matcher(secret).matches()) {
                throw new IllegalArgumentException("--agent-image-pull-secret " + secret
                        + ": not a Secret name (lowercase letters, digits, '-' and '.', at most 253 characters)");
            }
        }
    }
}
