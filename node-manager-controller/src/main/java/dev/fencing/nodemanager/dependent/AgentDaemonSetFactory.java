package dev.fencing.nodemanager.dependent;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.model.NodeLabels;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
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
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The desired agent DaemonSet of a fencing-enabled NodeGroup: pure, from the NodeGroup and the controller config.
 *
 * <p>Privileges: the agent container is {@code privileged} because container runtimes only let a container open a
 * host character device such as {@code /dev/watchdog} when it is privileged (a hostPath alone does not add the
 * device to the container's device cgroup). It runs as root because {@code /dev/watchdog} is root-owned 0600 and
 * the local API socket lives in the host's {@code /var/run}. Everything else is withheld: no Kubernetes API token
 * (agents never call the Kubernetes API; the only token is a projected one for the audience {@code fencing-agent},
 * which the API server itself does not accept, mounted so the agent can prove its pod and node to the controller),
 * read-only root filesystem, and only three host paths: the watchdog device,
 * {@code /var/run} (the local API socket and the bashible disable file) and the state dir. Host network: gossip
 * peers reach each other on node addresses.
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
                            .withContainers(new ContainerBuilder()
                                    .withName("agent")
                                    .withImage(config.agentImage())
                                    .withArgs(args(config))
                                    .addNewEnv().withName("NODE_NAME").withNewValueFrom()
                                        .withNewFieldRef().withFieldPath("spec.nodeName").endFieldRef()
                                    .endValueFrom().endEnv()
                                    .addNewEnv().withName(AgentJvm.ENV).withValue(AgentJvm.OPTIONS).endEnv()
                                    .addNewPort().withName("gossip-tcp").withContainerPort(config.gossipPort())
                                        .withProtocol("TCP").endPort()
                                    .addNewPort().withName("gossip-udp").withContainerPort(config.gossipPort())
                                        .withProtocol("UDP").endPort()
                                    .withResources(new ResourceRequirementsBuilder()
                                            .withRequests(requests).withLimits(limits).build())
                                    .withNewSecurityContext()
                                        .withPrivileged(true)
                                        .withRunAsUser(0L)
                                        .withReadOnlyRootFilesystem(true)
                                    .endSecurityContext()
                                    .withVolumeMounts(
                                            new VolumeMountBuilder().withName("watchdog")
                                                    .withMountPath("/dev/watchdog").build(),
                                            new VolumeMountBuilder().withName("var-run")
                                                    .withMountPath("/var/run").build(),
                                            new VolumeMountBuilder().withName("state")
                                                    .withMountPath("/var/lib/fencing-agent").build())
                                    .addAllToVolumeMounts(AgentIdentityVolumes.mounts(config.security()))
                                    .build())
                            .withVolumes(
                                    new VolumeBuilder().withName("watchdog").withNewHostPath()
                                            .withPath("/dev/watchdog").withType("CharDevice").endHostPath().build(),
                                    new VolumeBuilder().withName("var-run").withNewHostPath()
                                            .withPath("/var/run").withType("Directory").endHostPath().build(),
                                    new VolumeBuilder().withName("state").withNewHostPath()
                                            .withPath("/var/lib/fencing-agent").withType("DirectoryOrCreate")
                                            .endHostPath().build())
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

    private static java.util.List<String> args(ControllerConfig config) {
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("run", "--controller",
                config.agentControllerAddress(), "--node", "$(NODE_NAME)"));
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
