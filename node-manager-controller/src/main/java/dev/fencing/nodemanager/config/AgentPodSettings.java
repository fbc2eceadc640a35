package dev.fencing.nodemanager.config;

import dev.fencing.logging.LogFormat;
import dev.fencing.logging.LogLevels;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * How the controller renders the agent pods beyond image, resources and scheduling: the agent's HTTP port, how
 * the kubelet pulls the image, and the agent's log level and format.
 *
 * @param metricsPort      port of the agent's {@code /metrics}, {@code /healthz} and {@code /readyz} on every node
 *                         address (hostNetwork); 0: no HTTP server, so no probes ({@code --agent-metrics-port})
 * @param imagePullPolicy  {@code Always}, {@code IfNotPresent}, {@code Never}, or empty for the Kubernetes default
 *                         ({@code --agent-image-pull-policy})
 * @param imagePullSecrets Secrets in the controller's namespace the kubelet pulls the agent image with
 *                         ({@code --agent-image-pull-secret}, repeatable)
 * @param logLevels        the agents' {@code run --log-level} values ({@code --agent-log-level}); empty: the
 *                         agent's default ({@code info}), and no flag in the DaemonSet
 * @param logFormat        the agents' {@code run --log-format} ({@code --agent-log-format}); empty: the agent's
 *                         default ({@code text}), and no flag in the DaemonSet
 * @param probePort        port of the agent's {@code /healthz} and {@code /readyz} on the node's loopback address
 *                         only ({@code run --probe-port}), which the kubelet's probes ask: no pod can reach it, so
 *                         none can flood it, as any can {@code metricsPort}
 *                         ({@code --agent-probe-port}); 0: the probes ask {@code metricsPort} as before
 */
public record AgentPodSettings(int metricsPort, String imagePullPolicy, List<String> imagePullSecrets,
        List<String> logLevels, String logFormat, int probePort) {

    /** Default agent HTTP port: next to the gossip port 9651, clear of MetalLB (7946) and Deckhouse's agent (8500). */
    public static final int DEFAULT_METRICS_PORT = 9652;
    /** Default agent probe port, on the loopback address: next to the HTTP port. */
    public static final int DEFAULT_PROBE_PORT = 9653;
    /** The agent's HTTP port on, Kubernetes' pull policy, no pull secrets. */
    public static final AgentPodSettings DEFAULTS = new AgentPodSettings(DEFAULT_METRICS_PORT, "", List.of());

    private static final Set<String> PULL_POLICIES = Set.of("Always", "IfNotPresent", "Never");
    // A Secret name is a DNS subdomain (RFC 1123): what the API server would refuse in the DaemonSet otherwise.
    private static final Pattern SECRET_NAME =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    /** With the agent's default log level and format. */
    public AgentPodSettings(int metricsPort, String imagePullPolicy, List<String> imagePullSecrets) {
        this(metricsPort, imagePullPolicy, imagePullSecrets, List.of(), "");
    }

    /** With the default probe port. */
    public AgentPodSettings(int metricsPort, String imagePullPolicy, List<String> imagePullSecrets,
            List<String> logLevels, String logFormat) {
        this(metricsPort, imagePullPolicy, imagePullSecrets, logLevels, logFormat, DEFAULT_PROBE_PORT);
    }

    /** Where the kubelet's probes go: the loopback probe port, else the HTTP port; 0 = no probes. */
    public int probedPort() {
        return probePort > 0 ? probePort : metricsPort;
    }

    /** Validates, naming the flag. */
    public AgentPodSettings {
        Objects.requireNonNull(imagePullPolicy, "imagePullPolicy");
        imagePullSecrets = List.copyOf(imagePullSecrets);
        logLevels = logLevels.stream().map(String::strip).filter(s -> !s.isEmpty()).toList();
        logFormat = logFormat.strip();
        try {
            LogLevels.parse(logLevels);
            if (!logFormat.isEmpty()) {
                LogFormat.parse(logFormat);
            }
        } catch (IllegalArgumentException e) {
            // the agent would refuse the flag and crash-loop on every node: refuse it here, once
            throw new IllegalArgumentException("--agent" + e.getMessage().substring(1), e);
        }
        if (metricsPort < 0 || metricsPort > 65535) {
            throw new IllegalArgumentException("--agent-metrics-port " + metricsPort
                    + ": expected 1..65535, or 0 to run agents without their HTTP server (and without probes)");
        }
        if (probePort < 0 || probePort > 65535) {
            throw new IllegalArgumentException("--agent-probe-port " + probePort
                    + ": expected 1..65535, or 0 to probe the agents' HTTP port (--agent-metrics-port) instead");
        }
        if (probePort != 0 && probePort == metricsPort) {
            throw new IllegalArgumentException("--agent-probe-port " + probePort + " is --agent-metrics-port too:"
                    + " the probe listener is a second server on the loopback address; pick another port");
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
