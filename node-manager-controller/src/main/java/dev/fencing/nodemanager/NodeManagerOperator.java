package dev.fencing.nodemanager;

import dev.fencing.logging.LogFormat;
import dev.fencing.logging.LogLevels;
import dev.fencing.logging.LogSetup;
import dev.fencing.nodemanager.reconciler.WriteLimits;
import dev.fencing.nodemanager.grpc.StreamLimits;
import dev.fencing.nodemanager.config.AgentControlSecurity;
import dev.fencing.nodemanager.config.AgentPodSettings;
import dev.fencing.nodemanager.config.ClientKeyAlgorithm;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.config.LeaderElectionTimings;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.fencing.nodemanager.status.NodeFacts;
import dev.fencing.nodemanager.status.NodeGroupStatusTarget;
import dev.fencing.nodemanager.storm.ClusterStormLimits;
import dev.fencing.policy.MinHealthy;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import dev.fencing.nodemanager.escalation.PowerFencingSettings;
import picocli.CommandLine.Option;

/**
 * The controller's main: flags (each also from an environment variable {@code NMC_<FLAG>}), a fabric8 client from
 * {@code --master}/{@code --kubeconfig} or fabric8's usual discovery (in-cluster service account, KUBECONFIG), then
 * {@link NodeManager} until SIGTERM.
 */
@Command(name = "node-manager-controller", mixinStandardHelpOptions = true,
        description = "NodeGroup fencing operator and AgentControl server.")
public final class NodeManagerOperator implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(NodeManagerOperator.class);

    @Option(names = "--master", defaultValue = "${env:NMC_MASTER}",
            description = "API server URL (default: fabric8 discovery: in-cluster or kubeconfig).")
    String master;

    @Option(names = "--kubeconfig", defaultValue = "${env:NMC_KUBECONFIG}", description = "Path of a kubeconfig.")
    File kubeconfig;

    @Option(names = "--namespace", defaultValue = "${env:NMC_NAMESPACE:-${env:POD_NAMESPACE:-kube-system}}",
            description = "Namespace of agent DaemonSets and the leader Lease (default: $POD_NAMESPACE or kube-system).")
    String namespace;

    @Option(names = "--grpc-port", defaultValue = "${env:NMC_GRPC_PORT:-9650}", description = "AgentControl port.")
    int grpcPort;

    @Option(names = "--health-port", defaultValue = "${env:NMC_HEALTH_PORT:-8080}",
            description = "Port of /healthz, /readyz, /metrics (-1: off).")
    int healthPort;

    @Option(names = "--probe-port", defaultValue = "${env:NMC_PROBE_PORT:-8081}",
            description = "Port of the kubelet's /healthz and /readyz on every address of the pod, apart from"
                    + " --health-port: each connection is bounded in time and their number capped, so a client"
                    + " holding connections cannot get the replica restarted (default: ${DEFAULT-VALUE}; -1: off).")
    int probePort;

    @Option(names = "--gossip-port", defaultValue = "${env:NMC_GOSSIP_PORT:-9651}",
            description = "Port agents gossip on, TCP and UDP on the node's address (part of each member's gossip"
                    + " address; default: ${DEFAULT-VALUE}, clear of MetalLB's 7946 and Deckhouse's agent's 8500).")
    int gossipPort;

    @Option(names = "--agent-metrics-port", defaultValue = "${env:NMC_AGENT_METRICS_PORT:-9652}",
            description = "Port of the agents' /metrics, /healthz and /readyz on the node's addresses; the agent"
                    + " DaemonSet probes it (default: ${DEFAULT-VALUE}; 0: no HTTP server and no probes).")
    int agentMetricsPort;

    @Option(names = "--agent-probe-port", defaultValue = "${env:NMC_AGENT_PROBE_PORT:-9653}",
            description = "Port of the agents' /healthz and /readyz on the node's loopback address only, which the"
                    + " DaemonSet's probes ask (host 127.0.0.1): a pod on the network can flood --agent-metrics-port,"
                    + " but cannot reach loopback (default:"
                    + " ${DEFAULT-VALUE}; 0: probe --agent-metrics-port as before).")
    int agentProbePort;

    @Option(names = "--agent-image-pull-policy", defaultValue = "${env:NMC_AGENT_IMAGE_PULL_POLICY:-}",
            description = "imagePullPolicy of the agent containers: Always, IfNotPresent or Never (default: none,"
                    + " so Kubernetes decides by the tag).")
    String agentImagePullPolicy;

    @Option(names = "--agent-image-pull-secret", split = ",",
            defaultValue = "${env:NMC_AGENT_IMAGE_PULL_SECRET}",
            description = "Secret in --namespace the kubelet pulls the agent image with; repeatable or"
                    + " comma-separated.")
    List<String> agentImagePullSecrets;

    @Option(names = "--agent-image", defaultValue = "${env:NMC_AGENT_IMAGE:-fencing-agent:latest}",
            description = "Agent container image.")
    String agentImage;

    @Option(names = "--agent-controller-address", defaultValue = "${env:NMC_AGENT_CONTROLLER_ADDRESS}",
            description = "host:port agents dial (default: node-manager-controller.<namespace>.svc:<grpc-port>).")
    String agentControllerAddress;

    @Option(names = "--agent-resource", split = ",",
            defaultValue = "${env:NMC_AGENT_RESOURCE:-requests.cpu=10m,requests.memory=96Mi,limits.memory=192Mi}",
            description = "Agent container resources, e.g. requests.cpu=10m,limits.memory=192Mi (the memory limit"
                    + " must hold the agent JVM's bounds, at least 192Mi).")
    List<String> agentResources;

    @Option(names = "--agent-toleration", split = ",", defaultValue = "${env:NMC_AGENT_TOLERATION:-Exists}",
            description = "Agent tolerations: Exists (tolerate everything) or key[=value][:Effect].")
    List<String> agentTolerations;

    @Option(names = "--agent-priority-class", defaultValue = "${env:NMC_AGENT_PRIORITY_CLASS:-system-node-critical}",
            description = "Priority class of agent pods (empty: none).")
    String agentPriorityClass;

    @Option(names = "--leader-election", negatable = true, defaultValue = "${env:NMC_LEADER_ELECTION:-true}",
            fallbackValue = "true", description = "Elect a leader on a Lease (--no-leader-election: always lead).")
    boolean leaderElection;

    @Option(names = "--lease-name", defaultValue = "${env:NMC_LEASE_NAME:-node-manager-controller}",
            description = "Leader election Lease name.")
    String leaseName;

    @Option(names = "--leader-lease-duration", defaultValue = "${env:NMC_LEADER_LEASE_DURATION:-15s}",
            description = "How long after the leader's last renewal another replica may take the Lease over"
                    + " (default: ${DEFAULT-VALUE}); a new leader also waits this (plus --max-tie-lease) before it"
                    + " grants tie-breaks.")
    String leaderLeaseDuration;

    @Option(names = "--leader-renew-deadline", defaultValue = "${env:NMC_LEADER_RENEW_DEADLINE:-10s}",
            description = "How long the leader retries a failed renewal before it gives leadership up and exits;"
                    + " shorter than --leader-lease-duration (default: ${DEFAULT-VALUE}). Tie-breaks are granted only"
                    + " within this of the leader's latest renewal.")
    String leaderRenewDeadline;

    @Option(names = "--leader-retry-period", defaultValue = "${env:NMC_LEADER_RETRY_PERIOD:-2s}",
            description = "How often replicas try to acquire and the leader renews the Lease; shorter than"
                    + " --leader-renew-deadline / 1.2 (default: ${DEFAULT-VALUE}).")
    String leaderRetryPeriod;

    @Option(names = "--tls-cert", defaultValue = "${env:NMC_TLS_CERT}",
            description = "PEM certificate chain AgentControl is served with (required unless --insecure-plaintext);"
                    + " its SANs must include the host of --agent-controller-address. Reloaded when the file changes.")
    File tlsCert;

    @Option(names = "--tls-key", defaultValue = "${env:NMC_TLS_KEY}", description = "PEM private key of --tls-cert.")
    File tlsKey;

    @Option(names = "--tls-ca", defaultValue = "${env:NMC_TLS_CA}",
            description = "PEM CA bundle a follower verifies the leader's certificate with (default: --tls-cert).")
    File tlsCa;

    @Option(names = "--tls-reload-interval", defaultValue = "${env:NMC_TLS_RELOAD_INTERVAL:-30s}",
            description = "How often --tls-cert/--tls-key are checked for a renewal (default: ${DEFAULT-VALUE}).")
    String tlsReloadInterval;

    @Option(names = "--insecure-plaintext", defaultValue = "${env:NMC_INSECURE_PLAINTEXT:-false}",
            description = "Serve AgentControl without TLS (local labs only; logged at start and at every call)."
                    + " Agents still authenticate with their token.")
    boolean insecurePlaintext;

    @Option(names = "--agent-ca-secret", defaultValue = "${env:NMC_AGENT_CA_SECRET}",
            description = "Secret (in --namespace) whose ca.crt agent pods mount as --controller-ca; required with"
                    + " TLS.")
    String agentCaSecret;

    @Option(names = "--agent-service-account", defaultValue = "${env:NMC_AGENT_SERVICE_ACCOUNT}",
            description = "ServiceAccount of the agent pods (default: the namespace's default); its projected token"
                    + " (audience fencing-agent) is the agent's identity.")
    String agentServiceAccount;

    @Option(names = "--status-interval", defaultValue = "${env:NMC_STATUS_INTERVAL:-10s}",
            description = "Status recompute period without events.")
    String statusInterval;

    @Option(names = "--report-stale-after", defaultValue = "${env:NMC_REPORT_STALE_AFTER:-30s}",
            description = "A report older than this no longer counts as the agent being heard.")
    String reportStaleAfter;

    @Option(names = "--history-limit", defaultValue = "${env:NMC_HISTORY_LIMIT:-4096}",
            description = "Config changes kept per group for agents resuming by revision.")
    int historyLimit;

    @Option(names = "--stream-queue", defaultValue = "${env:NMC_STREAM_QUEUE:-4096}",
            description = "Messages queued per agent stream before it is cut off (the agent then resyncs).")
    int streamQueue;

    @Option(names = "--max-agent-streams", defaultValue = "${env:NMC_MAX_AGENT_STREAMS:-5000}",
            description = "Concurrent agent streams this replica serves; one more is refused (RESOURCE_EXHAUSTED).")
    int maxAgentStreams;

    @Option(names = "--stream-queue-bytes", defaultValue = "${env:NMC_STREAM_QUEUE_BYTES:-4194304}",
            description = "Bytes queued per agent stream before it is cut off (the agent then resyncs).")
    long streamQueueBytes;

    @Option(names = "--label-patch-interval", defaultValue = "${env:NMC_LABEL_PATCH_INTERVAL:-5s}",
            description = "At most one report-driven label patch per node within this interval.")
    String labelPatchInterval;

    @Option(names = "--event-interval", defaultValue = "${env:NMC_EVENT_INTERVAL:-1m}",
            description = "At most one Event per object and reason within this interval (duplicates dropped).")
    String eventInterval;

    @Option(names = "--max-tie-lease", defaultValue = "${env:NMC_MAX_TIE_LEASE:-30s}",
            description = "Longest ControlPlane tie lease; a new leader waits this (plus the Lease duration).")
    String maxTieLease;

    @Option(names = "--max-out-of-service", defaultValue = "${env:NMC_MAX_OUT_OF_SERVICE:-1}",
            description = "Per group, the most fenced nodes tainted node.kubernetes.io/out-of-service at once"
                    + " (0: never taint).")
    int maxOutOfService;

    @Option(names = "--storm-min-healthy", defaultValue = "${env:NMC_STORM_MIN_HEALTHY:-50%}",
            description = "Cluster-wide storm limit: a node is fenced (tainted, deleted, power-fenced) only while more"
                    + " than this many of all fencing groups' nodes are healthy; a percentage such as 50% or a count.")
    String stormMinHealthy;

    @Option(names = "--storm-max-concurrent", defaultValue = "${env:NMC_STORM_MAX_CONCURRENT:-2}",
            description = "Cluster-wide storm limit: fencings in progress at once over all groups (at least 1).")
    int stormMaxConcurrent;

    @Option(names = "--gossip-encryption", negatable = true, defaultValue = "${env:NMC_GOSSIP_ENCRYPTION:-true}",
            fallbackValue = "true", description = "Stream a per-group gossip keyring from Secret fencing-gossip-<group>"
                    + " (created by the leader); agents are served only once it exists.")
    boolean gossipEncryption;

    @Option(names = "--advertise-host", defaultValue = "${env:NMC_ADVERTISE_HOST:-${env:POD_IP}}",
            description = "Address other replicas reach this one on (default: $POD_IP, else the local host address);"
                    + " non-leaders forward agents' tie-break requests and reports to the leader there.")
    String advertiseHost;

    @Option(names = "--api-server-probe-url", defaultValue = "${env:NMC_API_SERVER_PROBE_URL}",
            description = "API server URL agents probe (GET /readyz) for the APIReachable tie-breaker (default: the"
                    + " URL this controller uses; its CA is sent either way).")
    String apiServerProbeUrl;

    @Option(names = "--server-side-apply", negatable = true,
            defaultValue = "${env:NMC_SERVER_SIDE_APPLY:-true}", fallbackValue = "true",
            description = "Write NodeGroup status and agent DaemonSets with server-side apply (default). With"
                    + " --no-server-side-apply: status as a JSON patch, DaemonSets by create / update when their"
                    + " desired-spec hash changes (what an API server without SSA, such as the fabric8 mock, needs).")
    boolean serverSideApply;

    @Option(names = "--nodegroup-status", defaultValue = "${env:NMC_NODEGROUP_STATUS:-auto}",
            paramLabel = "auto|write|off",
            description = "Where group status goes: NodeGroup status (write), or a ConfigMap fencing-status-<group>"
                    + " in the controller's namespace (off). auto (default): write where the NodeGroup CRD keeps every"
                    + " status field this controller writes; a CRD whose owner defines the status (Deckhouse's) would"
                    + " prune them, and its owner rewrites the conditions.")
    String nodeGroupStatus;

    @Option(names = "--log-level", split = ",", defaultValue = "${env:NMC_LOG_LEVEL:-info}",
            paramLabel = "LEVEL|LOGGER=LEVEL",
            description = "error|warn|info|debug|trace, and per logger (io.javaoperatorsdk=warn); repeatable or"
                    + " comma-separated (default: ${DEFAULT-VALUE}).")
    List<String> logLevel;

    @Option(names = "--log-format", defaultValue = "${env:NMC_LOG_FORMAT:-text}", paramLabel = "text|json",
            description = "Text lines, or one JSON object per line; both carry replica= (this pod's name, from"
                    + " $POD_NAME) (default: ${DEFAULT-VALUE}).")
    String logFormat;

    @Option(names = "--agent-log-level", split = ",", defaultValue = "${env:NMC_AGENT_LOG_LEVEL:-}",
            paramLabel = "LEVEL|LOGGER=LEVEL",
            description = "The agents' run --log-level, passed in the DaemonSet (empty: the agent's default, info).")
    List<String> agentLogLevel;

    @Option(names = "--agent-log-format", defaultValue = "${env:NMC_AGENT_LOG_FORMAT:-}", paramLabel = "text|json",
            description = "The agents' run --log-format, passed in the DaemonSet (empty: the agent's default, text).")
    String agentLogFormat;

    @Option(names = "--power-fencing", negatable = true, defaultValue = "${env:NMC_POWER_FENCING:-false}",
            fallbackValue = "true", description = "Escalate to power fencing through NodeFencingConfig stages of"
                    + " ClusterLabs fence agents (needs the NodeFencingConfig and NodeFencing CRDs, and the agents"
                    + " in --fence-agents-dir; default: ${DEFAULT-VALUE}).")
    boolean powerFencing;

    @Option(names = "--fence-agents-dir", defaultValue = "${env:NMC_FENCE_AGENTS_DIR:-/usr/sbin}",
            description = "Where the fence_* agents are (Debian fence-agents: /usr/sbin; default: ${DEFAULT-VALUE}).")
    File fenceAgentsDir;

    @Option(names = "--power-fencing-interval", defaultValue = "${env:NMC_POWER_FENCING_INTERVAL:-2s}",
            description = "How often the leader checks escalation candidates and NodeFencing records"
                    + " (default: ${DEFAULT-VALUE}).")
    String powerFencingInterval;

    @Option(names = "--kdump-port", defaultValue = "${env:NMC_KDUMP_PORT:-7410}",
            description = "With --power-fencing: UDP port for fence_kdump_send messages from dumping nodes; -1: no"
                    + " listener (default: ${DEFAULT-VALUE}).")
    int kdumpPort;

    @Option(names = "--node-fencing-retention", defaultValue = "${env:NMC_NODE_FENCING_RETENTION:-720h}",
            description = "With --power-fencing: how long a NodeFencing record is kept after its node returned; the"
                    + " leader deletes it then (0: keep every record; default: ${DEFAULT-VALUE}).")
    String nodeFencingRetention;

    public static void main(String[] args) {
        System.exit(new CommandLine(new NodeManagerOperator()).execute(args));
    }

    /**
     * The validated configuration. Public for tests that run the controller in process with the arguments a chart
     * renders (after {@code new CommandLine(operator).parseArgs(args)}).
     */
    public ControllerConfig config() {
        Map<String, String> resources = new LinkedHashMap<>();
        for (String r : agentResources) {
            int eq = r.indexOf('=');
            if (eq <= 0 || !(r.startsWith("requests.") || r.startsWith("limits."))) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--agent-resource " + r
                        + ": expected requests.<name>=<quantity> or limits.<name>=<quantity>");
            }
            resources.put(r.substring(0, eq).trim(), r.substring(eq + 1).trim());
        }
        List<Toleration> tolerations = new ArrayList<>();
        for (String t : agentTolerations) {
            tolerations.add(toleration(t.trim()));
        }
        if (tolerations.stream().noneMatch(NodeManagerOperator::toleratesOutOfService)) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--agent-toleration "
                    + String.join(",", agentTolerations) + ": the agents must tolerate "
                    + NodeFacts.OUT_OF_SERVICE_TAINT + ":" + NodeFacts.OUT_OF_SERVICE_EFFECT + ", the taint this "
                    + "controller puts on a fenced node: an evicted agent cannot report the node's return, so the "
                    + "taint would stay for good. Add " + NodeFacts.OUT_OF_SERVICE_TAINT + ":"
                    + NodeFacts.OUT_OF_SERVICE_EFFECT + ", or use Exists (the default)");
        }
        String address = agentControllerAddress == null || agentControllerAddress.isBlank()
                ? "node-manager-controller." + namespace + ".svc:" + grpcPort : agentControllerAddress;
        if (!insecurePlaintext && (tlsCert == null || tlsKey == null)) {
            throw new CommandLine.ParameterException(new CommandLine(this), "AgentControl is served over TLS only:"
                    + " pass --tls-cert and --tls-key, or --insecure-plaintext for a local lab");
        }
        if (!insecurePlaintext && (agentCaSecret == null || agentCaSecret.isBlank())) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--agent-ca-secret is required with"
                    + " TLS: agents verify the controller's certificate with that Secret's ca.crt");
        }
        AgentPodSettings agentPod;
        try {
            agentPod = new AgentPodSettings(agentMetricsPort,
                    agentImagePullPolicy == null ? "" : agentImagePullPolicy.trim(),
                    agentImagePullSecrets == null ? List.of() : agentImagePullSecrets.stream().map(String::trim)
                            .filter(s -> !s.isEmpty()).toList(),
                    agentLogLevel == null ? List.of() : agentLogLevel,
                    agentLogFormat == null ? "" : agentLogFormat, agentProbePort);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
        }
        ClusterStormLimits storm;
        try {
            storm = new ClusterStormLimits(MinHealthy.parse(stormMinHealthy), stormMaxConcurrent);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--storm-min-healthy / "
                    + "--storm-max-concurrent: " + e.getMessage());
        }
        AgentControlSecurity security = new AgentControlSecurity(insecurePlaintext, tlsCa, agentCaSecret,
                agentServiceAccount, duration("--tls-reload-interval", tlsReloadInterval));
        return new ControllerConfig(namespace, grpcPort, healthPort, gossipPort, agentImage, address, resources,
                tolerations, agentPriorityClass == null ? "" : agentPriorityClass, leaderElection, leaseName, tlsCert,
                tlsKey, duration("--status-interval", statusInterval),
                duration("--report-stale-after", reportStaleAfter), historyLimit, streamQueue,
                duration("--max-tie-lease", maxTieLease), maxOutOfService, gossipEncryption,
                advertiseHost == null || advertiseHost.isBlank() ? null : advertiseHost,
                apiServerProbeUrl == null || apiServerProbeUrl.isBlank() ? null : apiServerProbeUrl, security,
                serverSideApply, agentPod, storm);
    }

    /**
     * Configures logging from {@code --log-level} and {@code --log-format}, with {@code replica=} (the pod's name) on
     * every line.
     */
    void configureLogging() {
        LogLevels levels;
        LogFormat format;
        try {
            levels = LogLevels.parse(logLevel == null ? List.of() : logLevel);
            format = LogFormat.parse(logFormat == null ? "text" : logFormat);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
        }
        String replica = Optional.ofNullable(System.getenv("POD_NAME"))
                .or(() -> Optional.ofNullable(System.getenv("HOSTNAME"))).orElse("-");
        LogSetup.configure(levels, format, Map.of("replica", replica));
    }

    /** The validated {@code --nodegroup-status}. */
    NodeGroupStatusTarget.Mode nodeGroupStatusMode() {
        try {
            return NodeGroupStatusTarget.Mode.parse(nodeGroupStatus);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
        }
    }

    /** The power fencing settings, or empty without {@code --power-fencing}. */
    Optional<PowerFencingSettings> powerFencingSettings() {
        if (!powerFencing) {
            return Optional.empty();
        }
        try {
            return Optional.of(new PowerFencingSettings(fenceAgentsDir.toPath(),
                    duration("--power-fencing-interval", powerFencingInterval), 4, kdumpPort,
                    duration("--node-fencing-retention", nodeFencingRetention)));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
        }
    }

    /** The validated leader election timings. */
    LeaderElectionTimings electionTimings() {
        try {
            return new LeaderElectionTimings(duration("--leader-lease-duration", leaderLeaseDuration),
                    duration("--leader-renew-deadline", leaderRenewDeadline),
                    duration("--leader-retry-period", leaderRetryPeriod));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
        }
    }

    private Duration duration(String flag, String text) {
        try {
            return dev.fencing.policy.DurationFormat.parse(text);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), flag + " " + text + ": "
                    + e.getMessage());
        }
    }

    /** Whether {@code t} tolerates the out-of-service taint this controller puts on a fenced node. */
    static boolean toleratesOutOfService(Toleration t) {
        boolean key = t.getKey() == null || t.getKey().isEmpty() ? "Exists".equals(t.getOperator())
                : NodeFacts.OUT_OF_SERVICE_TAINT.equals(t.getKey()) && ("Exists".equals(t.getOperator())
                        || NodeFacts.OUT_OF_SERVICE_VALUE.equals(t.getValue()));
        boolean effect = t.getEffect() == null || t.getEffect().isEmpty()
                || NodeFacts.OUT_OF_SERVICE_EFFECT.equals(t.getEffect());
        return key && effect;
    }

    static Toleration toleration(String spec) {
        if (spec.equals("Exists")) {
            return new TolerationBuilder().withOperator("Exists").build();
        }
        String effect = null;
        String kv = spec;
        int colon = spec.lastIndexOf(':');
        if (colon > 0) {
            effect = spec.substring(colon + 1);
            kv = spec.substring(0, colon);
        }
        int eq = kv.indexOf('=');
        TolerationBuilder b = new TolerationBuilder().withEffect(effect);
        return eq < 0 ? b.withKey(kv).withOperator("Exists").build()
                : b.withKey(kv.substring(0, eq)).withOperator("Equal").withValue(kv.substring(eq + 1)).build();
    }

    /** {@code --probe-port}: -1 (off) or a port, not one the replica listens on for something else. */
    public int probePort() {
        if (probePort < -1 || probePort > 65535) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--probe-port " + probePort
                    + ": expected -1 (off) or 0..65535");
        }
        if (probePort > 0 && (probePort == healthPort || probePort == grpcPort)) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--probe-port " + probePort
                    + " is also --" + (probePort == healthPort ? "health" : "grpc") + "-port; pick another port");
        }
        return probePort;
    }

    @Override
    public Integer call() throws Exception {
        configureLogging();
        ControllerConfig config = config();
        int probes = probePort();
        NodeGroupStatusTarget.Mode statusTarget = nodeGroupStatusMode();
        LeaderElectionTimings electionTimings = electionTimings();
        StreamLimits streamLimits = new StreamLimits(maxAgentStreams, streamQueueBytes);
        WriteLimits writeLimits = new WriteLimits(duration("--label-patch-interval", labelPatchInterval),
                duration("--event-interval", eventInterval));
        Config k8s;
        if (kubeconfig != null) {
            k8s = ClientKeyAlgorithm.apply(Config.fromKubeconfig(null, Files.readString(kubeconfig.toPath()),
                    kubeconfig.getPath()));
        } else {
            k8s = Config.autoConfigure(null);
        }
        if (master != null && !master.isBlank()) {
            k8s = new ConfigBuilder(k8s).withMasterUrl(master).build();
        }
        KubernetesClient client = new KubernetesClientBuilder().withConfig(k8s).build();
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        NodeManager manager = new NodeManager(client, config, streamLimits, writeLimits, electionTimings,
                InstantSource.system(), registry).nodeGroupStatus(statusTarget);
        powerFencingSettings().ifPresent(manager::powerFencing);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("event=shutdown");
            manager.close();
            client.close();
            stopped.countDown();
        }, "shutdown"));
        manager.start();
        int probesBound = probes < 0 ? -1 : manager.serveProbes(probes);
        LOG.info("event=running master={} namespace={} grpc_port={} health_port={} probe_port={} agent_image={}"
                        + " server_side_apply={}", client.getConfiguration().getMasterUrl(), config.namespace(),
                manager.grpcPort(), manager.healthPort(), probesBound, config.agentImage(), config.serverSideApply());
        stopped.await();
        return 0;
    }
}
