package dev.fencing.nodemanager.status;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupStatus;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the leader keeps each group's status so that the next leader continues from it: the fenced nodes recorded
 * while no majority reported, and the storm limit that held (its cooldown). By default that is the NodeGroup's
 * {@code status} (written through JOSDK's status patch). Where the NodeGroup CRD's owner defines the status
 * ({@link NodeGroupStatusTarget} decided not to write there, e.g. Deckhouse), it is a ConfigMap
 * {@code fencing-status-<group>} in the controller's namespace instead: data {@code status.json} (the
 * {@link NodeGroupStatus} as JSON), label {@value #GROUP_LABEL}{@code =<group>}, owned by the NodeGroup (the garbage
 * collector removes it with the group; the leader also deletes it). Every replica watches these ConfigMaps
 * ({@code ClusterCache}), so a new leader and the followers' group views read the last status without an API call.
 * A ConfigMap left by an earlier NodeGroup of the same name (another UID) or one that does not parse counts as no
 * status: the new leader then starts from nothing, as without a store.
 */
public final class GroupStatusStore {

    private static final Logger LOG = LoggerFactory.getLogger(GroupStatusStore.class);

    /** Label on the status ConfigMaps; its value is the group. */
    public static final String GROUP_LABEL = "node-manager.deckhouse.io/group-status";
    /** The data key holding the status JSON. */
    public static final String DATA_KEY = "status.json";
    /** The field manager of the server-side apply. */
    public static final String FIELD_MANAGER = "node-manager-controller";

    private final KubernetesClient client;
    private final String namespace;
    private final GroupConfigMaps maps;
    private final Function<String, Optional<ConfigMap>> cached;
    private volatile boolean inNodeGroup = true;
    // Per ConfigMap name: the last one parsed (by resourceVersion) and its status, so the caches are parsed once per
    // change, not at every read.
    private final Map<String, Parsed> parsed = new ConcurrentHashMap<>();
    // Per group: the status this replica last wrote and when (System.nanoTime), so a write is not repeated while the
    // informer may not show it yet; after that, a cache that still differs (the ConfigMap was deleted or edited) is
    // written again.
    private final Map<String, Written> written = new ConcurrentHashMap<>();
    private final LongSupplier nanoTime;
    // Per ConfigMap name: the resourceVersion whose problem was logged, so each bad version is logged once.
    private final Map<String, String> problemsLogged = new ConcurrentHashMap<>();

    private record Parsed(String resourceVersion, String ownerUid, Optional<NodeGroupStatus> status) {
    }

    private record Written(NodeGroupStatus status, long atNanos) {
    }

    /** How long a write counts as not yet in the informer's cache. */
    static final long CACHE_LAG_NANOS = 5_000_000_000L;

    /**
     * @param namespace       the controller's namespace, where the ConfigMaps live
     * @param serverSideApply write with server-side apply (else create, or update when it exists)
     * @param cached          the status ConfigMap of a group from this replica's informer, if any
     */
    public GroupStatusStore(KubernetesClient client, String namespace, boolean serverSideApply,
                            Function<String, Optional<ConfigMap>> cached) {
        this(client, namespace, serverSideApply, cached, System::nanoTime);
    }

    GroupStatusStore(KubernetesClient client, String namespace, boolean serverSideApply,
                     Function<String, Optional<ConfigMap>> cached, LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
        this.client = client;
        this.namespace = namespace;
        this.maps = new GroupConfigMaps(client, namespace, serverSideApply);
        this.cached = cached;
    }

    /** {@code fencing-status-<group>}. */
    public static String name(String group) {
        return "fencing-status-" + group;
    }

    /** Keep status in the NodeGroups (true, the default) or in ConfigMaps; set once at start. */
    public void inNodeGroup(boolean inNodeGroup) {
        this.inNodeGroup = inNodeGroup;
    }

    /** Whether status is kept in the NodeGroups. */
    public boolean inNodeGroup() {
        return inNodeGroup;
    }

    /** The status kept for {@code group}: its NodeGroup's, or its ConfigMap's; empty when none. */
    public Optional<NodeGroupStatus> read(NodeGroup group) {
        if (inNodeGroup) {
            return Optional.ofNullable(group.getStatus());
        }
        String name = name(group.getMetadata().getName());
        Optional<ConfigMap> map = cached.apply(group.getMetadata().getName());
        if (map.isEmpty()) {
            parsed.remove(name);
            return Optional.empty();
        }
        ConfigMap cm = map.get();
        String version = Objects.requireNonNullElse(cm.getMetadata().getResourceVersion(), "");
        Parsed p = parsed.get(name);
        if (p == null || !p.resourceVersion().equals(version)) {
            p = parse(cm, version);
            parsed.put(name, p);
        }
        if (!Objects.equals(p.ownerUid(), group.getMetadata().getUid())) {
            logOnce(name, version + "/owner", "it belongs to another NodeGroup of this name (owner uid "
                    + p.ownerUid() + ", this group's " + group.getMetadata().getUid() + ")");
            return Optional.empty();
        }
        return p.status();
    }

    private Parsed parse(ConfigMap cm, String version) {
        String owner = ownerUid(cm);
        try {
            return new Parsed(version, owner, Optional.of(parse(cm, client.getKubernetesSerialization())));
        } catch (IllegalArgumentException e) {
            logOnce(cm.getMetadata().getName(), version, e.getMessage());
            return new Parsed(version, owner, Optional.empty());
        }
    }

    private void logOnce(String name, String version, String problem) {
        if (!version.equals(problemsLogged.put(name, version))) {
            LOG.warn("event=group_status_ignored configmap={}/{} reason=\"{}\" detail=\"a new leader starts from no"
                    + " previous status for this group\"", namespace, name, problem);
        }
    }

    /** The NodeGroup UID the ConfigMap's controlling owner reference names; null without one. */
    static String ownerUid(ConfigMap cm) {
        List<OwnerReference> owners = cm.getMetadata().getOwnerReferences();
        return owners == null ? null : owners.stream().filter(o -> "NodeGroup".equals(o.getKind()))
                .map(OwnerReference::getUid).findFirst().orElse(null);
    }

    /**
     * The status in a ConfigMap of this store.
     *
     * @throws IllegalArgumentException when it has no {@value #DATA_KEY} or that is not a NodeGroup status
     */
    public static NodeGroupStatus parse(ConfigMap cm, KubernetesSerialization serialization) {
        String json = cm.getData() == null ? null : cm.getData().get(DATA_KEY);
        if (json == null || json.isBlank()) {
            throw new IllegalArgumentException("no data key " + DATA_KEY);
        }
        NodeGroupStatus status;
        try {
            status = serialization.unmarshal(json, NodeGroupStatus.class);
        } catch (RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            throw new IllegalArgumentException(DATA_KEY + " is not a NodeGroup status: "
                    + GroupConfigMaps.firstLine(root), e);
        }
        if (status == null) {
            throw new IllegalArgumentException(DATA_KEY + " is not a JSON object");
        }
        return status;
    }

    /** The ConfigMap that keeps {@code status} for {@code group}. */
    public static ConfigMap configMap(NodeGroup group, NodeGroupStatus status, String namespace,
                                      KubernetesSerialization serialization) {
        return new ConfigMapBuilder()
                .withMetadata(GroupConfigMaps.metadata(group, name(group.getMetadata().getName()), namespace,
                        GROUP_LABEL))
                .withData(Map.of(DATA_KEY, serialization.asJson(status))).build();
    }

    /**
     * Keeps {@code status} in {@code group}'s ConfigMap unless this replica wrote exactly that less than
     * {@link #CACHE_LAG_NANOS} ago (the caller compares with the cache, which may not show that write yet). A failed
     * write is logged and not remembered, so the next reconcile writes again.
     *
     * @return whether the ConfigMap now holds {@code status}
     */
    public boolean keep(NodeGroup group, NodeGroupStatus status) {
        if (inNodeGroup) {
            throw new IllegalStateException("status is kept in the NodeGroups");
        }
        String g = group.getMetadata().getName();
        Written last = written.get(g);
        long now = nanoTime.getAsLong();
        if (last != null && status.equals(last.status()) && now - last.atNanos() < CACHE_LAG_NANOS) {
            return true;
        }
        ConfigMap desired = configMap(group, status, namespace, client.getKubernetesSerialization());
        try {
            maps.apply(desired);
            written.put(g, new Written(status, now));
            return true;
        } catch (KubernetesClientException e) {
            LOG.warn("event=group_status_write_failed group={} configmap={}/{} code={} message=\"{}\" detail=\"tried"
                    + " again at the next reconcile\"", g, namespace, name(g), e.getCode(),
                    GroupConfigMaps.firstLine(e));
            return false;
        }
    }

    /**
     * Deletes a deleted group's ConfigMap, when the informer holds one owned by that group (what the garbage
     * collector also does through the owner reference).
     */
    public void delete(String group, String uid) {
        written.remove(group);
        if (inNodeGroup) {
            return;
        }
        try {
            if (cached.apply(group).filter(cm -> Objects.equals(ownerUid(cm), uid)).isPresent()) {
                maps.delete(name(group));
                LOG.info("event=group_status_deleted group={} configmap={}/{}", group, namespace, name(group));
            }
        } catch (KubernetesClientException e) {
            LOG.warn("event=group_status_delete_failed group={} configmap={}/{} code={} message=\"{}\" detail=\"the"
                    + " garbage collector removes it through its owner reference\"", group, namespace, name(group),
                    e.getCode(), GroupConfigMaps.firstLine(e));
        }
    }
}
