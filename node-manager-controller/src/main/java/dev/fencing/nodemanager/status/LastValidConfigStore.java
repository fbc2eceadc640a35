package dev.fencing.nodemanager.status;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import dev.fencing.proto.nodemanager.v1.Member;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Base64;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the leader keeps the policy each group's agents are served and the members that go with it, so that a
 * controller that starts while the group's {@code spec.fencing} is invalid serves its agents the same instead of
 * nothing (no configuration, no {@code ControlPlane} tie-break, no maintenance or removal signal). A ConfigMap
 * {@code fencing-config-<group>} in the controller's namespace: binary data {@value #DATA_KEY} (a {@link GroupConfig}
 * with only group, policy and members: never a key), data {@value #SUMMARY_KEY} for people, label
 * {@value #GROUP_LABEL}{@code =<group>}, owned by the NodeGroup (the garbage collector removes it with the group; the
 * leader also deletes it when fencing is switched off). Written by the leader while the spec is valid, only when
 * what is served changed; every replica watches these ConfigMaps ({@code ClusterCache}). One left by an earlier
 * NodeGroup of the same name (another UID), one that does not parse, or one whose content no controller would serve
 * counts as none, logged once per version.
 */
public final class LastValidConfigStore {

    private static final Logger LOG = LoggerFactory.getLogger(LastValidConfigStore.class);

    /** Label on these ConfigMaps; its value is the group. */
    public static final String GROUP_LABEL = "node-manager.deckhouse.io/group-config";
    /** The binary data key holding the {@link GroupConfig}. */
    public static final String DATA_KEY = "config.pb";
    /** A one-line description for people ({@code kubectl get cm -o yaml}); never read. */
    public static final String SUMMARY_KEY = "summary";

    /** How long a write counts as not yet in the informer's cache. */
    static final long CACHE_LAG_NANOS = 5_000_000_000L;
    /** How long a refused write of the same content waits before it is tried again (reconciles come often). */
    static final long RETRY_NANOS = 30_000_000_000L;

    private final KubernetesClient client;
    private final String namespace;
    private final boolean serverSideApply;
    private final Function<String, Optional<ConfigMap>> cached;
    private final LongSupplier nanoTime;
    // Per ConfigMap name: the last version parsed and its outcome, so the cache is parsed once per change.
    private final Map<String, Parsed> parsed = new ConcurrentHashMap<>();
    // Per group: what this replica last wrote and when, so a write is not repeated while the informer lags.
    private final Map<String, Written> written = new ConcurrentHashMap<>();
    // Per group: the content whose write failed last and when, so a refused write is not repeated at every reconcile.
    private final Map<String, Written> failed = new ConcurrentHashMap<>();
    // Per ConfigMap name: the version whose problem was logged.
    private final Map<String, String> problemsLogged = new ConcurrentHashMap<>();

    private record Parsed(String resourceVersion, String ownerUid, Optional<GroupConfig> config, String problem) {
    }

    private record Written(GroupConfig config, long atNanos) {
    }

    /**
     * @param namespace       the controller's namespace, where the ConfigMaps live
     * @param serverSideApply write with server-side apply (else create, or update when it exists)
     * @param cached          the ConfigMap of a group from this replica's informer, if any
     */
    public LastValidConfigStore(KubernetesClient client, String namespace, boolean serverSideApply,
                                Function<String, Optional<ConfigMap>> cached) {
        this(client, namespace, serverSideApply, cached, System::nanoTime);
    }

    LastValidConfigStore(KubernetesClient client, String namespace, boolean serverSideApply,
                         Function<String, Optional<ConfigMap>> cached, LongSupplier nanoTime) {
        this.client = client;
        this.namespace = namespace;
        this.serverSideApply = serverSideApply;
        this.cached = cached;
        this.nanoTime = nanoTime;
    }

    /** {@code fencing-config-<group>}. */
    public static String name(String group) {
        return "fencing-config-" + group;
    }

    /**
     * The policy and members kept for the NodeGroup {@code group} with UID {@code uid}; empty when there is no such
     * ConfigMap, or it belongs to another NodeGroup of this name, or it cannot be served (logged once per version).
     */
    public Optional<GroupConfig> read(String group, String uid) {
        String name = name(group);
        Optional<ConfigMap> map = cached.apply(group);
        if (map.isEmpty()) {
            parsed.remove(name);
            return Optional.empty();
        }
        ConfigMap cm = map.get();
        String version = Objects.requireNonNullElse(cm.getMetadata().getResourceVersion(), "");
        Parsed p = parsed.get(name);
        if (p == null || !p.resourceVersion().equals(version)) {
            p = parse(cm, group, version);
            parsed.put(name, p);
        }
        if (p.config().isEmpty()) {
            logOnce(name, version, p.problem());
            return Optional.empty();
        }
        if (!Objects.equals(p.ownerUid(), uid)) {
            logOnce(name, version + "/owner", "it belongs to another NodeGroup of this name (owner uid "
                    + p.ownerUid() + ", this group's " + uid + ")");
            return Optional.empty();
        }
        return p.config();
    }

    private static Parsed parse(ConfigMap cm, String group, String version) {
        String owner = GroupStatusStore.ownerUid(cm);
        try {
            return new Parsed(version, owner, Optional.of(parse(cm, group)), null);
        } catch (IllegalArgumentException e) {
            return new Parsed(version, owner, Optional.empty(), e.getMessage());
        }
    }

    /**
     * The policy and members in a ConfigMap of this store for {@code group}.
     *
     * @throws IllegalArgumentException when it has no {@value #DATA_KEY}, that is no {@link GroupConfig}, or what it
     *                                  holds is not what a controller serves: another group, no policy, a quorum
     *                                  size of 0 or above the member count, a member without a name or gossip
     *                                  address or listed twice, or any key (keys come only from the keyring Secret)
     */
    public static GroupConfig parse(ConfigMap cm, String group) {
        String encoded = cm.getBinaryData() == null ? null : cm.getBinaryData().get(DATA_KEY);
        if (encoded == null || encoded.isBlank()) {
            throw new IllegalArgumentException("no binary data key " + DATA_KEY);
        }
        GroupConfig config;
        try {
            config = GroupConfig.parseFrom(Base64.getDecoder().decode(encoded.strip()));
        } catch (IllegalArgumentException | InvalidProtocolBufferException e) {
            throw new IllegalArgumentException(DATA_KEY + " is not a GroupConfig: "
                    + String.valueOf(e.getMessage()).replace('"', '\''), e);
        }
        if (!group.equals(config.getGroup())) {
            throw new IllegalArgumentException(DATA_KEY + " is for group '" + config.getGroup() + "'");
        }
        if (!config.hasPolicy()) {
            throw new IllegalArgumentException(DATA_KEY + " has no policy");
        }
        if (config.hasKeyring() || config.hasSignals() || !config.getNodeName().isEmpty()
                || config.hasApiServerProbe()) {
            throw new IllegalArgumentException(DATA_KEY + " carries more than group, policy and members (keys come"
                    + " only from the keyring Secret)");
        }
        int quorum = config.getPolicy().getQuorumSize();
        if (quorum < 1 || quorum > config.getMembersCount()) {
            throw new IllegalArgumentException(DATA_KEY + " has quorum size " + quorum + " for "
                    + config.getMembersCount() + " members");
        }
        Set<String> names = new HashSet<>();
        for (Member m : config.getMembersList()) {
            if (m.getName().isEmpty() || m.getGossipAddress().isEmpty() || !names.add(m.getName())) {
                throw new IllegalArgumentException(DATA_KEY + " has a member without a name or gossip address, or"
                        + " one listed twice ('" + m.getName() + "')");
            }
        }
        return config;
    }

    private void logOnce(String name, String version, String problem) {
        if (!version.equals(problemsLogged.put(name, version))) {
            LOG.warn("event=last_valid_config_ignored configmap={}/{} reason=\"{}\" detail=\"a controller that starts"
                    + " while the group's spec is invalid serves its agents nothing\"", namespace, name, problem);
        }
    }

    /** The ConfigMap that keeps {@code config} (group, policy and members only) for {@code group}. */
    public static ConfigMap configMap(NodeGroup group, GroupConfig config, String namespace) {
        String g = group.getMetadata().getName();
        GroupConfig kept = GroupConfig.newBuilder().setGroup(g).setPolicy(config.getPolicy())
                .addAllMembers(config.getMembersList()).build();
        String summary = kept.getMembersCount() + " members, quorum size " + kept.getPolicy().getQuorumSize()
                + ", mode " + kept.getPolicy().getMode() + ", NodeGroup generation "
                + group.getMetadata().getGeneration() + " or earlier";
        return new ConfigMapBuilder().withNewMetadata().withName(name(g)).withNamespace(namespace)
                .withLabels(Map.of(GROUP_LABEL, g, "app.kubernetes.io/managed-by", GroupStatusStore.FIELD_MANAGER))
                .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion(group.getApiVersion())
                        .withKind(group.getKind()).withName(g).withUid(group.getMetadata().getUid())
                        .withController(true).withBlockOwnerDeletion(false).build())
                .endMetadata()
                .withData(Map.of(SUMMARY_KEY, summary))
                .withBinaryData(Map.of(DATA_KEY, Base64.getEncoder().encodeToString(deterministic(kept))))
                .build();
    }

    // Map fields in a stable order, so the same config is always the same bytes.
    private static byte[] deterministic(GroupConfig config) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(config.getSerializedSize());
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        out.useDeterministicSerialization();
        try {
            config.writeTo(out);
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * Keeps {@code config}'s policy and members for {@code group} unless the cache already holds them or this
     * replica wrote exactly them less than {@link #CACHE_LAG_NANOS} ago. A failed write is logged and tried again
     * {@link #RETRY_NANOS} later, or at once for other content.
     *
     * @return whether the ConfigMap now holds them
     */
    public boolean keep(NodeGroup group, GroupConfig config) {
        String g = group.getMetadata().getName();
        GroupConfig kept = GroupConfig.newBuilder().setGroup(g).setPolicy(config.getPolicy())
                .addAllMembers(config.getMembersList()).build();
        if (read(g, group.getMetadata().getUid()).filter(kept::equals).isPresent()) {
            return true;
        }
        Written last = written.get(g);
        long now = nanoTime.getAsLong();
        if (last != null && kept.equals(last.config()) && now - last.atNanos() < CACHE_LAG_NANOS) {
            return true;
        }
        Written refused = failed.get(g);
        if (refused != null && kept.equals(refused.config()) && now - refused.atNanos() < RETRY_NANOS) {
            return false;
        }
        ConfigMap desired = configMap(group, kept, namespace);
        try {
            if (serverSideApply) {
                client.configMaps().inNamespace(namespace).resource(desired)
                        .fieldManager(GroupStatusStore.FIELD_MANAGER).forceConflicts().serverSideApply();
            } else {
                client.configMaps().inNamespace(namespace).resource(desired).createOr(NonDeletingOperation::update);
            }
            written.put(g, new Written(kept, now));
            failed.remove(g);
            LOG.debug("event=last_valid_config_kept group={} configmap={}/{} members={}", g, namespace, name(g),
                    kept.getMembersCount());
            return true;
        } catch (KubernetesClientException e) {
            failed.put(g, new Written(kept, now));
            LOG.warn("event=last_valid_config_write_failed group={} configmap={}/{} code={} message=\"{}\" detail=\"tried"
                    + " again in 30s, or at once when what is served changes\"", g, namespace, name(g), e.getCode(),
                    String.valueOf(e.getMessage()).lines().findFirst().orElse("").replace('"', '\''));
            return false;
        }
    }

    /**
     * Deletes {@code group}'s ConfigMap when the informer holds one owned by the NodeGroup with UID {@code uid}
     * (fencing switched off, or the group deleted: what the garbage collector also does then).
     */
    public void delete(String group, String uid) {
        written.remove(group);
        failed.remove(group);
        try {
            if (cached.apply(group).filter(cm -> Objects.equals(GroupStatusStore.ownerUid(cm), uid)).isPresent()) {
                client.configMaps().inNamespace(namespace).withName(name(group)).delete();
                LOG.info("event=last_valid_config_deleted group={} configmap={}/{}", group, namespace, name(group));
            }
        } catch (KubernetesClientException e) {
            LOG.warn("event=last_valid_config_delete_failed group={} configmap={}/{} code={} message=\"{}\"", group,
                    namespace, name(group), e.getCode(),
                    String.valueOf(e.getMessage()).lines().findFirst().orElse("").replace('"', '\''));
        }
    }
}
