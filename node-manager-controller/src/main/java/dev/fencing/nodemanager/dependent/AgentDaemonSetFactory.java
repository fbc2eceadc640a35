package dev.fencing.nodemanager.dependent;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.config.AgentPodSettings;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.model.NodeLabels;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The desired agent DaemonSet of a fencing-enabled NodeGroup: pure, from the NodeGroup and the controller config.
 *
 * <p>Privileges: the agent container is {@code privileged} because container runtimes only let a container open a
 * host character device such as {@code /dev/watchdog} when it is privileged (a hostPath alone does not add the
 * device to the container's device cgroup). It runs as root because {@code /dev/watchdog} is root-owned 0600 and the
 * socket directory is a root-owned host directory. Everything else is withheld: no Kubernetes API token (agents never
 * call the Kubernetes API; the only token is a projected one for the audience {@code fencing-agent}, which the API
 * server itself does not accept, mounted so the agent can prove its pod and node to the controller), read-only root
 * filesystem with a small disk-backed {@code /tmp} (JNA and Netty unpack their native libraries there), and only
 * these host paths:
 * <ul>
 * <li>{@code /dev} read-only at {@code /host/dev}, and the agent opens {@code /host/dev/watchdog}: a hostPath of the
 *     device itself ({@code CharDevice}) would keep the pod in ContainerCreating on a node without a watchdog, and a
 *     privileged container's own {@code /dev} is a snapshot taken at its start, so a {@code modprobe softdog} later
 *     would not show there. A missing device is the agent's reported condition (WATCHDOG_UNAVAILABLE), retried. A
 *     read-only mount still lets the agent write to the device node; it only keeps it from changing {@code /dev}.</li>
 * <li>{@code /var/run/fencing-agent} (DirectoryOrCreate) at the same path: the local API socket and the status file
 *     bashible reads, not all of {@code /var/run}.</li>
 * <li>the state dir {@code /var/lib/fencing-agent}.</li>
 * </ul>
 * The contract socket path {@code /var/run/fencing-agent.sock} is a host symlink into that directory, made by the
 * init container {@code socket-link} (the same image): root (the host's {@code /var/run} is root-owned 0755, so its
 * owner needs no capability to add a link there), not privileged, no capabilities at all, read-only root filesystem,
 * and the only container that mounts the host's {@code /var/run} (at {@code /host/var/run}). Host network: gossip
 * peers reach each other on node addresses, and the probes reach the agent's HTTP port there.
 *
 * <p>Probes (unless {@code --agent-metrics-port} is 0): a startup probe on {@code /healthz} gives the JVM and the
 * first quorum evaluation up to {@value #STARTUP_SECONDS} s, liveness on {@code /healthz} restarts an agent whose
 * quorum loop is stuck, and readiness on {@code /readyz} (config known and quorum held) gates the rolling update,
 * one node at a time.
 *
 * <p>Memory: the JVM runs with the bounded options of {@link AgentJvm} (through {@code JAVA_TOOL_OPTIONS}, which
 * every launcher reads, so the image's entrypoint stays as it is) under a memory limit that holds them.
 */
public final class AgentDaemonSetFactory {

    private static final ObjectMapper SORTED_JSON = new ObjectMapper()
            .configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);

    /** Annotation holding the hash of the desired spec; an update is written only when it differs. */
    public static final String HASH_ANNOTATION = "node-manager.deckhouse.io/desired-hash";
    /** Label on everything the controller creates for agents. */
    public static final String APP_LABEL = "app.kubernetes.io/name";
    /** Value of {@link #APP_LABEL}. */
    public static final String APP = "fencing-agent";
    /** Group label on agent DaemonSets and pods. */
    public static final String GROUP_LABEL = "node-manager.deckhouse.io/group";

    /** Host directory of the local API socket and the status file, mounted at the same path. */
    public static final String SOCKET_DIR = "/var/run/fencing-agent";
    /** The agent's local API socket. */
    public static final String SOCKET = SOCKET_DIR + "/fencing-agent.sock";
    /** Where the host's {@code /dev} is mounted in the agent container. */
    public static final String HOST_DEV = "/host/dev";
    /** Name of the agent container's HTTP port (metrics and probes). */
    public static final String METRICS_PORT_NAME = "metrics";
    /** Where the kubelet's probes connect when the agent has a probe port: the node's (and agent's) loopback. */
    public static final String PROBE_HOST = "127.0.0.1";
    /** How long the startup probe waits for the JVM and the first quorum evaluation. */
    static final int STARTUP_SECONDS = 120;
    private static final int STARTUP_PERIOD_SECONDS = 2;
    private static final String STATE_DIR = "/var/lib/fencing-agent";
    // JNA and Netty unpack a few MiB of native libraries; disk-backed so it does not count against the JVM budget.
    private static final Quantity TMP_SIZE = new Quantity("32Mi");
    private static final String HOST_DEV_VOLUME = "host-dev";
    private static final String SOCKET_DIR_VOLUME = "socket-dir";
    private static final String HOST_VAR_RUN_VOLUME = "host-var-run";
    private static final String STATE_VOLUME = "state";
    private static final String TMP_VOLUME = "tmp";

    private AgentDaemonSetFactory() {
    }

    /** {@code fencing-agent-<group>}. */
    public static String name(String group) {
        return "fencing-agent-" + group;
    }

    /** The desired DaemonSet, with the hash annotation set. */
    public static DaemonSet desired(NodeGroup group, ControllerConfig config) {
        String g = group.getMetadata().getName();
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(APP_LABEL, APP);
        labels.put(GROUP_LABEL, g);
        AgentPodSettings pod = config.agentPod();
        DaemonSet ds = new DaemonSetBuilder()
                .withNewMetadata()
                    .withName(name(g))
                    .withNamespace(config.namespace())
                    .withLabels(labels)
                    .withOwnerReferences(new OwnerReferenceBuilder()
                            .withApiVersion(group.getApiVersion())
                            .withKind(group.getKind())
                            .withName(g)
                            .withUid(group.getMetadata().getUid())
                            .withController(true)
                            .withBlockOwnerDeletion(true)
                            .build())
                .endMetadata()
                .withNewSpec()
                    .withNewSelector().withMatchLabels(labels).endSelector()
                    .withNewUpdateStrategy().withType("RollingUpdate")
                        .withNewRollingUpdate().withNewMaxUnavailable(1).endRollingUpdate()
                    .endUpdateStrategy()
                    .withNewTemplate()
                        .withNewMetadata().withLabels(labels).endMetadata()
                        .withNewSpec()
                            .withNodeSelector(Map.of(NodeLabels.GROUP, g))
                            .withHostNetwork(true)
                            .withDnsPolicy("ClusterFirstWithHostNet")
                            .withAutomountServiceAccountToken(false)
                            .withPriorityClassName(config.agentPriorityClass().isEmpty()
                                    ? null : config.agentPriorityClass())
                            .withTerminationGracePeriodSeconds(30L)
                            .withTolerations(config.agentTolerations())
                            .withImagePullSecrets(pod.imagePullSecrets().stream()
                                    .map(LocalObjectReference::new).toList())
                            .withInitContainers(socketLink(config))
                            .withContainers(agent(config))
                            .withVolumes(
                                    hostPath(HOST_DEV_VOLUME, "/dev", "Directory"),
                                    hostPath(SOCKET_DIR_VOLUME, SOCKET_DIR, "DirectoryOrCreate"),
                                    hostPath(HOST_VAR_RUN_VOLUME, "/var/run", "Directory"),
                                    hostPath(STATE_VOLUME, STATE_DIR, "DirectoryOrCreate"),
                                    new VolumeBuilder().withName(TMP_VOLUME).withNewEmptyDir()
                                            .withSizeLimit(TMP_SIZE).endEmptyDir().build())
                            .addAllToVolumes(AgentIdentityVolumes.volumes(config.security()))
                            .withServiceAccountName(config.security().agentServiceAccount().isEmpty()
                                    ? null : config.security().agentServiceAccount())
                        .endSpec()
                    .endTemplate()
                .endSpec()
                .build();
        ds.getMetadata().setAnnotations(Map.of(HASH_ANNOTATION, hash(ds)));
        return ds;
    }

    private static Container agent(ControllerConfig config) {
        Map<String, Quantity> requests = new LinkedHashMap<>();
        Map<String, Quantity> limits = new LinkedHashMap<>();
        config.agentResources().forEach((k, v) -> {
            if (k.startsWith("requests.")) {
                requests.put(k.substring("requests.".length()), new Quantity(v));
            } else if (k.startsWith("limits.")) {
                limits.put(k.substring("limits.".length()), new Quantity(v));
            }
        });
        // Without a limit the pod could take the node's memory; ControllerConfig already refused a smaller one.
        limits.putIfAbsent("memory", AgentJvm.MEMORY_LIMIT);
        int metricsPort = config.agentPod().metricsPort();
        ContainerBuilder agent = new ContainerBuilder()
                .withName("agent")
                .withImage(config.agentImage())
                .withImagePullPolicy(pullPolicy(config))
                .withArgs(args(config))
                .addNewEnv().withName("NODE_NAME").withNewValueFrom()
                    .withNewFieldRef().withFieldPath("spec.nodeName").endFieldRef()
                .endValueFrom().endEnv()
                .addNewEnv().withName(AgentJvm.ENV).withValue(AgentJvm.OPTIONS).endEnv()
                .addNewPort().withName("gossip-tcp").withContainerPort(config.gossipPort())
                    .withProtocol("TCP").endPort()
                .addNewPort().withName("gossip-udp").withContainerPort(config.gossipPort())
                    .withProtocol("UDP").endPort()
                .withResources(new ResourceRequirementsBuilder().withRequests(requests).withLimits(limits).build())
                .withNewSecurityContext()
                    .withPrivileged(true)
                    .withRunAsUser(0L)
                    .withReadOnlyRootFilesystem(true)
                .endSecurityContext()
                .withVolumeMounts(
                        new VolumeMountBuilder().withName(HOST_DEV_VOLUME).withMountPath(HOST_DEV)
                                .withReadOnly(true).build(),
                        new VolumeMountBuilder().withName(SOCKET_DIR_VOLUME).withMountPath(SOCKET_DIR).build(),
                        new VolumeMountBuilder().withName(STATE_VOLUME).withMountPath(STATE_DIR).build(),
                        new VolumeMountBuilder().withName(TMP_VOLUME).withMountPath("/tmp").build())
                .addAllToVolumeMounts(AgentIdentityVolumes.mounts(config.security()));
        if (metricsPort > 0) {
            agent.addNewPort().withName(METRICS_PORT_NAME).withContainerPort(metricsPort).withProtocol("TCP")
                    .endPort();
        }
        if (config.agentPod().probedPort() > 0) {
            agent.withStartupProbe(probe(config, "/healthz", STARTUP_PERIOD_SECONDS,
                            STARTUP_SECONDS / STARTUP_PERIOD_SECONDS))
                    .withLivenessProbe(probe(config, "/healthz", 10, 3))
                    .withReadinessProbe(probe(config, "/readyz", 5, 2));
        }
        return agent.build();
    }

    // Probe timeouts stay short: the agent answers from memory; a slow answer is what a stuck agent looks like.
    // With a probe port the kubelet asks the node's loopback address (the agent shares the host's network).
    private static Probe probe(ControllerConfig config, String path, int periodSeconds, int failureThreshold) {
        int probePort = config.agentPod().probePort();
        ProbeBuilder b = new ProbeBuilder();
        if (probePort > 0) {
            b.withNewHttpGet().withHost(PROBE_HOST).withPath(path).withNewPort(probePort).endHttpGet();
        } else {
            b.withNewHttpGet().withPath(path).withNewPort(METRICS_PORT_NAME).endHttpGet();
        }
        return b.withPeriodSeconds(periodSeconds).withTimeoutSeconds(3).withFailureThreshold(failureThreshold)
                .build();
    }

    private static Container socketLink(ControllerConfig config) {
        return new ContainerBuilder()
                .withName("socket-link")
                .withImage(config.agentImage())
                .withImagePullPolicy(pullPolicy(config))
                .withArgs("socket-link", "--link", "/host/var/run/fencing-agent.sock",
                        "--target", "fencing-agent/fencing-agent.sock")
                .withNewSecurityContext()
                    .withPrivileged(false)
                    .withAllowPrivilegeEscalation(false)
                    .withRunAsUser(0L)
                    .withReadOnlyRootFilesystem(true)
                    .withNewCapabilities().withDrop("ALL").endCapabilities()
                .endSecurityContext()
                .withResources(new ResourceRequirementsBuilder()
                        .withRequests(Map.of("cpu", new Quantity("10m"), "memory", new Quantity("64Mi")))
                        .withLimits(Map.of("memory", AgentJvm.MEMORY_LIMIT)).build())
                .addNewEnv().withName(AgentJvm.ENV).withValue(AgentJvm.OPTIONS).endEnv()
                // The same JVM as the agent's, so the same writable /tmp for whatever it unpacks at start.
                .withVolumeMounts(new VolumeMountBuilder().withName(HOST_VAR_RUN_VOLUME)
                                .withMountPath("/host/var/run").build(),
                        new VolumeMountBuilder().withName(TMP_VOLUME).withMountPath("/tmp").build())
                .build();
    }

    private static String pullPolicy(ControllerConfig config) {
        String policy = config.agentPod().imagePullPolicy();
        return policy.isEmpty() ? null : policy;
    }

    private static Volume hostPath(String name, String path, String type) {
        return new VolumeBuilder().withName(name).withNewHostPath().withPath(path).withType(type).endHostPath()
                .build();
    }

    private static List<String> args(ControllerConfig config) {
        List<String> args = new ArrayList<>(List.of("run", "--controller", config.agentControllerAddress(),
                "--node", "$(NODE_NAME)", "--socket", SOCKET, "--watchdog-device", HOST_DEV + "/watchdog",
                // a group's disk.device (a host path such as /dev/disk/by-id/…) is opened under the same mount
                "--disk-root", "/host"));
        args.addAll(List.of("--metrics-port", Integer.toString(config.agentPod().metricsPort())));
        if (config.agentPod().probePort() > 0) {
            args.addAll(List.of("--probe-port", Integer.toString(config.agentPod().probePort())));
        }
        // only when set: an unchanged default leaves the pod template (and its hash) as it was, so no roll
        if (!config.agentPod().logLevels().isEmpty()) {
            args.addAll(List.of("--log-level", String.join(",", config.agentPod().logLevels())));
        }
        if (!config.agentPod().logFormat().isEmpty()) {
            args.addAll(List.of("--log-format", config.agentPod().logFormat()));
        }
        args.addAll(AgentIdentityVolumes.args(config.security()));
        return args;
    }

    /**
     * SHA-256 of the spec and labels as JSON with every object's keys sorted: changes when anything the controller
     * sets changes, and only then. Maps such as the container resources come from {@code Map.copyOf}, whose
     * iteration order differs between JVMs, so hashing them in iteration order made every new leader see a
     * "changed" DaemonSet and rewrite the one the old leader wrote.
     */
    static String hash(DaemonSet ds) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(canonicalJson(ds.getSpec()).getBytes(StandardCharsets.UTF_8));
            sha.update(canonicalJson(ds.getMetadata().getLabels()).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(sha.digest(), 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }

    private static String canonicalJson(Object value) {
        try {
            Object tree = SORTED_JSON.readValue(Serialization.asJson(value), Object.class);
            return SORTED_JSON.writeValueAsString(tree);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize the desired DaemonSet: " + e.getMessage(), e);
        }
    }
}
