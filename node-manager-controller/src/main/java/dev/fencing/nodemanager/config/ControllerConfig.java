package dev.fencing.nodemanager.config;

import io.fabric8.kubernetes.api.model.Toleration;
import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The controller's own configuration (from flags and environment, see {@code NodeManagerOperator}).
 *
 * @param namespace          where agent DaemonSets, Events of namespaced objects and the leader Lease live
 * @param grpcPort           AgentControl TCP port (0 = any, tests)
 * @param healthPort         /healthz, /readyz, /metrics port (0 = any, -1 = off)
 * @param gossipPort         the port agents gossip on; part of every member's gossip address
 * @param agentImage         agent container image
 * @param agentControllerAddress host:port agents dial (the controller Service)
 * @param agentResources     container resources: requests/limits by "requests.cpu", "limits.memory", ...
 * @param agentTolerations   tolerations of the agent pods
 * @param agentPriorityClass priority class of the agent pods (empty = none)
 * @param leaderElection     use a Lease for leader election (off: this replica always leads)
 * @param leaseName          leader Lease name
 * @param tlsCert            PEM certificate chain for AgentControl (required unless security says plaintext)
 * @param tlsKey             PEM private key, or null
 * @param statusInterval     how often status is recomputed without events (report staleness, fenced bookkeeping)
 * @param reportStaleAfter   a report older than this no longer counts as the agent being heard
 * @param historyLimit       config changes kept per group for agents resuming by revision
 * @param streamQueue        messages queued per agent stream before it is cut off
 * @param maxTieLease        the longest ControlPlane tie lease
 * @param maxOutOfService    per group, the most fenced nodes tainted out-of-service at once (0: never taint)
 * @param gossipEncryption   stream a per-group gossip keyring from a Secret (created by the leader) and serve agents
 *                           only once it is known
 * @param advertiseHost      host other replicas reach this one's AgentControl port on (pod IP), or null for the
 *                           local host address; part of the leader election identity so non-leaders can forward
 * @param apiServerProbeUrl  the API server URL agents probe for APIReachable instead of the one the controller uses,
 *                           or null for the same
 * @param security           TLS and agent identity settings of the AgentControl channel
 * @param serverSideApply    write NodeGroup status and the agent DaemonSets with server-side apply (field manager
 *                           {@code node-manager-controller} / {@code nodegroup-status-controller}, forced); off: the
 *                           status as a JSON patch and the DaemonSet by create / update-on-hash, the only writes the
 *                           fabric8 CRUD mock understands
 * @param agentPod           the agent pods' HTTP port and image pull settings
 * @param storm              the cluster-wide storm limits ({@code --storm-min-healthy}, {@code --storm-max-concurrent})
 */
public record ControllerConfig(
        String namespace,
        int grpcPort,
        int healthPort,
        int gossipPort,
        String agentImage,
        String agentControllerAddress,
        Map<String, String> agentResources,
        List<Toleration> agentTolerations,
        String agentPriorityClass,
        boolean leaderElection,
        String leaseName,
        File tlsCert,
        File tlsKey,
        Duration statusInterval,
        Duration reportStaleAfter,
        int historyLimit,
        int streamQueue,
        Duration maxTieLease,
        int maxOutOfService,
        boolean gossipEncryption,
        String advertiseHost,
        String apiServerProbeUrl,
        AgentControlSecurity security,
        boolean serverSideApply,
        AgentPodSettings agentPod,
        dev.fencing.nodemanager.storm.ClusterStormLimits storm) {

    /** Validates. */
    public ControllerConfig {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(agentImage, "agentImage");
        Objects.requireNonNull(agentControllerAddress, "agentControllerAddress");
        agentResources = Map.copyOf(agentResources);
        agentTolerations = List.copyOf(agentTolerations);
        Objects.requireNonNull(security, "security");
        Objects.requireNonNull(agentPod, "agentPod");
        Objects.requireNonNull(storm, "storm");
        if (agentPod.metricsPort() != 0 && agentPod.metricsPort() == gossipPort) {
            throw new IllegalArgumentException("--agent-metrics-port " + agentPod.metricsPort() + " is the gossip"
                    + " port: agents run on the host network, so both cannot listen on it; pick another port");
        }
        if (agentPod.probePort() != 0 && agentPod.probePort() == gossipPort) {
            throw new IllegalArgumentException("--agent-probe-port " + agentPod.probePort() + " is the gossip"
                    + " port: agents run on the host network, so both cannot listen on it; pick another port");
        }
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new IllegalArgumentException("--tls-cert and --tls-key go together");
        }
        if (tlsCert == null && !security.insecurePlaintext()) {
            throw new IllegalArgumentException("AgentControl is served over TLS only: pass --tls-cert and --tls-key "
                    + "(the chart mounts them), or --insecure-plaintext for a local lab");
        }
        if (maxOutOfService < 0) {
            throw new IllegalArgumentException("--max-out-of-service must not be negative");
        }
        String memory = dev.fencing.nodemanager.dependent.AgentJvm.memoryLimitProblem(agentResources);
        if (memory != null) {
            throw new IllegalArgumentException(memory);
        }
        if (apiServerProbeUrl != null && !apiServerProbeUrl.isBlank()) {
            java.net.URI uri;
            try {
                uri = new java.net.URI(apiServerProbeUrl);
            } catch (java.net.URISyntaxException e) {
                throw new IllegalArgumentException("--api-server-probe-url " + apiServerProbeUrl + ": "
                        + e.getMessage());
            }
            if (!"https".equals(uri.getScheme()) || uri.getHost() == null) {
                throw new IllegalArgumentException("--api-server-probe-url " + apiServerProbeUrl
                        + ": expected https://<host>[:<port>], the API server address agents can reach");
            }
        }
        if (historyLimit < 1 || streamQueue < 1) {
            throw new IllegalArgumentException("--history-limit and --stream-queue must be positive");
        }
    }

    /**
     * The configuration without explicit channel security, as before {@link AgentControlSecurity} existed: TLS when
     * {@code tlsCert} is given, else plaintext; agents get no CA mount; no server-side apply (the CRUD mock has
     * none); the default agent pod settings. Tests use it.
     */
    public ControllerConfig(String namespace, int grpcPort, int healthPort, int gossipPort, String agentImage,
                            String agentControllerAddress, Map<String, String> agentResources,
                            List<Toleration> agentTolerations, String agentPriorityClass, boolean leaderElection,
                            String leaseName, File tlsCert, File tlsKey, Duration statusInterval,
                            Duration reportStaleAfter, int historyLimit, int streamQueue, Duration maxTieLease,
                            int maxOutOfService, boolean gossipEncryption, String advertiseHost) {
        this(namespace, grpcPort, healthPort, gossipPort, agentImage, agentControllerAddress, agentResources,
                agentTolerations, agentPriorityClass, leaderElection, leaseName, tlsCert, tlsKey, statusInterval,
                reportStaleAfter, historyLimit, streamQueue, maxTieLease, maxOutOfService, gossipEncryption,
                advertiseHost, null, AgentControlSecurity.implied(tlsCert), false, AgentPodSettings.DEFAULTS,
                dev.fencing.nodemanager.storm.ClusterStormLimits.DEFAULTS);
    }

    /** The same configuration with other channel security. */
    public ControllerConfig withSecurity(File cert, File key, AgentControlSecurity newSecurity) {
        return new ControllerConfig(namespace, grpcPort, healthPort, gossipPort, agentImage, agentControllerAddress,
                agentResources, agentTolerations, agentPriorityClass, leaderElection, leaseName, cert, key,
                statusInterval, reportStaleAfter, historyLimit, streamQueue, maxTieLease, maxOutOfService,
                gossipEncryption, advertiseHost, apiServerProbeUrl, newSecurity, serverSideApply, agentPod,
                storm);
    }

    /** The same configuration with server-side apply on or off. */
    public ControllerConfig withServerSideApply(boolean on) {
        return new ControllerConfig(namespace, grpcPort, healthPort, gossipPort, agentImage, agentControllerAddress,
                agentResources, agentTolerations, agentPriorityClass, leaderElection, leaseName, tlsCert, tlsKey,
                statusInterval, reportStaleAfter, historyLimit, streamQueue, maxTieLease, maxOutOfService,
                gossipEncryption, advertiseHost, apiServerProbeUrl, security, on, agentPod, storm);
    }

    /** The same configuration with other agent pod settings. */
    public ControllerConfig withAgentPod(AgentPodSettings settings) {
        return new ControllerConfig(namespace, grpcPort, healthPort, gossipPort, agentImage, agentControllerAddress,
                agentResources, agentTolerations, agentPriorityClass, leaderElection, leaseName, tlsCert, tlsKey,
                statusInterval, reportStaleAfter, historyLimit, streamQueue, maxTieLease, maxOutOfService,
                gossipEncryption, advertiseHost, apiServerProbeUrl, security, serverSideApply, settings,
                storm);
    }

    /** The same configuration with other cluster-wide storm limits. */
    public ControllerConfig withStorm(dev.fencing.nodemanager.storm.ClusterStormLimits limits) {
        return new ControllerConfig(namespace, grpcPort, healthPort, gossipPort, agentImage, agentControllerAddress,
                agentResources, agentTolerations, agentPriorityClass, leaderElection, leaseName, tlsCert, tlsKey,
                statusInterval, reportStaleAfter, historyLimit, streamQueue, maxTieLease, maxOutOfService,
                gossipEncryption, advertiseHost, apiServerProbeUrl, security, serverSideApply, agentPod, limits);
    }

    /** The host agents and other replicas verify the serving certificate against: the host of the agent address. */
    public String serverName() {
        String a = agentControllerAddress;
        if (a.startsWith("[")) {
            return a.substring(1, a.indexOf(']'));
        }
        int colon = a.lastIndexOf(':');
        return colon > 0 ? a.substring(0, colon) : a;
    }

    /** Defaults suitable for tests on the CRUD mock: any free ports, no leader election, fast status, no SSA. */
    public static ControllerConfig forTests(String namespace) {
        return new ControllerConfig(namespace, 0, -1, dev.fencing.nodemanager.model.GroupModel.DEFAULT_GOSSIP_PORT,
                "registry.example/fencing-agent:test",
                "node-manager-controller." + namespace + ".svc:9650",
                Map.of("requests.cpu", "10m", "requests.memory", "96Mi", "limits.memory", "192Mi"),
                List.of(new io.fabric8.kubernetes.api.model.TolerationBuilder().withOperator("Exists").build()),
                "system-node-critical", false, "node-manager-controller", null, null, Duration.ofSeconds(2),
                Duration.ofSeconds(30), 4096, 4096, Duration.ofSeconds(30), 1, true, "127.0.0.1");
    }
}
