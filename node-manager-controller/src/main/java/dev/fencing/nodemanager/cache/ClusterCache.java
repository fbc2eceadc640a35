package dev.fencing.nodemanager.cache;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.grpc.AgentDirectory;
import dev.fencing.nodemanager.dependent.AgentDaemonSetFactory;
import dev.fencing.nodemanager.model.GossipAddressAnnotation;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.model.NetworkAddresses;
import dev.fencing.nodemanager.model.NodeGroupSpecs;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.stream.ConfigDistributor;
import dev.fencing.nodemanager.status.GroupStatusStore;
import dev.fencing.nodemanager.status.LastValidConfigStore;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import io.fabric8.kubernetes.api.model.ConfigMap;
import dev.fencing.nodemanager.model.NodeAddressForm;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import java.net.InetAddress;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import dev.fencing.nodemanager.model.GossipKeyringSecret;
import dev.fencing.proto.nodemanager.v1.GossipKeyring;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * agent-config-publisher: this replica's informers on Nodes (label {@code node.deckhouse.io/group} exists) and
 * NodeGroups, feeding the AgentControl streams on every replica, leader or not. Any event marks the affected groups
 * (for a relabel: the old and the new one) dirty; one publisher thread recomputes each dirty group's
 * {@link GroupModel} from the caches and hands it to the {@link ConfigDistributor}. Marks coalesce, so a burst of
 * changes costs one recompute per group. A third informer follows the kubelets' heartbeat Leases into
 * {@link NodeLeases} (the fenced-node rule needs Kubernetes to agree that a node is gone). The namespace's agent
 * DaemonSets, keyring Secrets (with gossip encryption), status ConfigMaps (where status is not kept in the
 * NodeGroups) and the groups' last valid configs ({@link LastValidConfigStore}) are watched too, so that reconciles
 * and recomputes read them from memory.
 */
public final class ClusterCache implements AgentDirectory, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterCache.class);
    private static final String BY_GROUP = "byGroup";
    private static final String BY_ADDRESS = "byAddress";

    /** Reads the policy and members kept for a group (see {@link LastValidConfigStore#read}). */
    @FunctionalInterface
    public interface LastValidReader {
        /** The policy and members kept for the NodeGroup {@code group} with UID {@code uid} at {@code generation}. */
        Optional<GroupConfig> read(String group, String uid, long generation);
    }

    private final KubernetesClient client;
    private final int gossipPort;
    private final ConfigDistributor distributor;
    private final String namespace;
    private final boolean gossipEncryption;
    private final NodeLeases nodeLeases;
    private final Map<String, String> keyringProblems = new ConcurrentHashMap<>();
    private final Map<String, GroupModel> models = new ConcurrentHashMap<>();
    // node → (CIDR → IP) its agent last reported to this replica; the Node's annotation, once written, comes first.
    private final Map<String, Map<String, String>> networkAddresses = new ConcurrentHashMap<>();
    // Refusals of each group's latest recompute: a report repeated every interval logs its refusal once while it
    // lasts.
    private final RefusalLog refusals = new RefusalLog();
    private final Set<String> dirty = ConcurrentHashMap.newKeySet();
    private final List<Consumer<GroupModel>> modelListeners = new CopyOnWriteArrayList<>();
    private final List<Consumer<NodeGroup>> groupDeletedListeners = new CopyOnWriteArrayList<>();
    private final List<Consumer<Node>> nodeGoneListeners = new CopyOnWriteArrayList<>();
    private final ExecutorService publisher = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "agent-config-publisher");
        t.setDaemon(true);
        return t;
    });
    private SharedIndexInformer<Node> nodes;
    private SharedIndexInformer<NodeGroup> groups;
    private volatile SharedIndexInformer<Secret> keyrings;
    private SharedIndexInformer<Lease> leases;
    private volatile SharedIndexInformer<ConfigMap> statusConfigMaps;
    private volatile SharedIndexInformer<ConfigMap> lastValidConfigMaps;
    // The policy and members kept for a group (LastValidConfigStore); none until set.
    private volatile LastValidReader lastValidConfigs = (g, uid, generation) -> Optional.empty();
    private volatile SharedIndexInformer<DaemonSet> agentDaemonSets;
    private volatile boolean watchStatusConfigMaps;

    /**
     * @param namespace        where keyring Secrets live
     * @param gossipEncryption stream each group's keyring from its Secret
     * @param nodeLeases       fed with the kubelets' heartbeat Leases
     */
    public ClusterCache(KubernetesClient client, int gossipPort, ConfigDistributor distributor, String namespace,
                        boolean gossipEncryption, NodeLeases nodeLeases) {
        this.client = client;
        this.nodeLeases = nodeLeases;
        this.gossipPort = gossipPort;
        this.distributor = distributor;
        this.namespace = namespace;
        this.gossipEncryption = gossipEncryption;
    }

    /**
     * The agent of {@code node} (in {@code group}) reported its address on each gossip network; a change is streamed
     * to the group's agents as one {@code member_upserted} for that node.
     */
    public void reportedNetworkAddresses(String node, String group, Map<String, String> addresses) {
        Map<String, String> previous = addresses.isEmpty() ? networkAddresses.remove(node)
                : networkAddresses.put(node, Map.copyOf(addresses));
        if (!Objects.equals(previous == null ? Map.of() : previous, addresses)) {
            mark(group);
        }
    }

    /** Called after every recompute with the new model. */
    public void addModelListener(Consumer<GroupModel> listener) {
        modelListeners.add(listener);
    }

    /** Called with a Node (its last known state) when it is deleted or leaves every group (its group label goes). */
    public void addNodeGoneListener(Consumer<Node> listener) {
        nodeGoneListeners.add(listener);
    }

    /** Called when a NodeGroup is deleted. */
    public void addGroupDeletedListener(Consumer<NodeGroup> listener) {
        groupDeletedListeners.add(listener);
    }

    /**
     * Also watch the groups' status ConfigMaps in the namespace ({@link GroupStatusStore}, where group status is not
     * kept in the NodeGroups). Call before {@link #start}.
     */
    public void watchStatusConfigMaps(boolean watch) {
        this.watchStatusConfigMaps = watch;
    }

    /**
     * Where a group's last valid policy and members are read (by group, NodeGroup UID and generation) when this replica
     * starts while its spec is invalid ({@link LastValidConfigStore#read}); call before {@link #start}.
     */
    public void lastValidConfigs(LastValidReader reader) {
        this.lastValidConfigs = Objects.requireNonNull(reader, "reader");
    }

    /** The {@link LastValidConfigStore} ConfigMap of {@code group} in this replica's cache; empty before start. */
    public Optional<ConfigMap> lastValidConfigMap(String group) {
        SharedIndexInformer<ConfigMap> informer = lastValidConfigMaps;
        return informer == null ? Optional.empty()
                : Optional.ofNullable(informer.getStore().getByKey(namespace + "/" + LastValidConfigStore.name(group)));
    }

    /** The status ConfigMap of {@code group} in this replica's cache; always empty when not watched. */
    public Optional<ConfigMap> statusConfigMap(String group) {
        SharedIndexInformer<ConfigMap> informer = statusConfigMaps;
        return informer == null ? Optional.empty()
                : Optional.ofNullable(informer.getStore().getByKey(namespace + "/" + GroupStatusStore.name(group)));
    }

    /**
     * The agent DaemonSet {@code name} in the namespace in this replica's cache (label
     * {@value AgentDaemonSetFactory#APP_LABEL}={@value AgentDaemonSetFactory#APP}); shared with the informer: never to
     * be modified. Empty before {@link #start}, and for a DaemonSet without that label (someone else's).
     */
    public Optional<DaemonSet> agentDaemonSet(String name) {
        SharedIndexInformer<DaemonSet> informer = agentDaemonSets;
        return informer == null ? Optional.empty()
                : Optional.ofNullable(informer.getStore().getByKey(namespace + "/" + name));
    }

    /** Starts the informers and waits until they have synced. */
    public void start() {
        nodes = client.nodes().withLabel(NodeLabels.GROUP).runnableInformer(0);
        nodes.addIndexers(Map.of(BY_GROUP, n -> List.of(groupLabel(n)), BY_ADDRESS, ClusterCache::addresses));
        nodes.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Node n) {
                mark(groupLabel(n));
            }

            @Override
            public void onUpdate(Node old, Node n) {
                mark(groupLabel(old));
                mark(groupLabel(n));
            }

            @Override
            public void onDelete(Node n, boolean unknownFinalState) {
                mark(groupLabel(n));
                // Deleted, or no longer in any group (the informer follows the group label).
                networkAddresses.remove(n.getMetadata().getName());
                nodeGoneListeners.forEach(l -> l.accept(n));
            }
        });
        groups = client.resources(NodeGroup.class).runnableInformer(0);
        groups.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(NodeGroup g) {
                mark(g.getMetadata().getName());
            }

            @Override
            public void onUpdate(NodeGroup old, NodeGroup g) {
                mark(g.getMetadata().getName());
            }

            @Override
            public void onDelete(NodeGroup g, boolean unknownFinalState) {
                mark(g.getMetadata().getName());
                groupDeletedListeners.forEach(l -> l.accept(g));
            }
        });
        if (gossipEncryption) {
            keyrings = client.secrets().inNamespace(namespace).withLabel(GossipKeyringSecret.GROUP_LABEL)
                    .runnableInformer(0);
            keyrings.addEventHandler(onEvents(s -> mark(keyringGroup(s)), s -> mark(keyringGroup(s))));
            keyrings.start().toCompletableFuture().join();
        }
        if (watchStatusConfigMaps) {
            statusConfigMaps = client.configMaps().inNamespace(namespace).withLabel(GroupStatusStore.GROUP_LABEL)
                    .runnableInformer(0);
            statusConfigMaps.start().toCompletableFuture().join();
        }
        // Before the Nodes and NodeGroups: the first recompute of a group whose spec is invalid reads it.
        lastValidConfigMaps = client.configMaps().inNamespace(namespace).withLabel(LastValidConfigStore.GROUP_LABEL)
                .runnableInformer(0);
        // Only a group served nothing yet reads it: the leader's writes need no recompute elsewhere.
        lastValidConfigMaps.addEventHandler(onEvents(cm -> markUnserved(lastValidGroup(cm)), cm -> { }));
        lastValidConfigMaps.start().toCompletableFuture().join();
        agentDaemonSets = client.apps().daemonSets().inNamespace(namespace)
                .withLabel(AgentDaemonSetFactory.APP_LABEL, AgentDaemonSetFactory.APP).runnableInformer(0);
        agentDaemonSets.start().toCompletableFuture().join();
        leases = client.leases().inNamespace(NodeLeases.NAMESPACE).runnableInformer(0);
        leases.addEventHandler(onEvents(nodeLeases::observed, nodeLeases::deleted));
        leases.start().toCompletableFuture().join();
        nodes.start().toCompletableFuture().join();
        groups.start().toCompletableFuture().join();
        LOG.info("event=caches_synced nodes={} nodegroups={}", nodes.getStore().list().size(),
                groups.getStore().list().size());
    }

    private static List<String> addresses(Node n) {
        if (n.getStatus() == null || n.getStatus().getAddresses() == null) {
            return List.of();
        }
        return n.getStatus().getAddresses().stream().map(NodeAddress::getAddress).filter(Objects::nonNull)
                .map(NodeAddressForm::of).distinct().toList();
    }

    /** Whether {@code address} is in the {@code status.addresses} of a Node of some group (this replica's cache). */
    public boolean nodeAddress(InetAddress address) {
        SharedIndexInformer<Node> informer = nodes;
        return informer != null && !informer.getIndexer().byIndex(BY_ADDRESS, address.getHostAddress()).isEmpty();
    }

    /** True once the informers are watching. */
    public boolean healthy() {
        return nodes != null && groups != null && nodes.isWatching() && groups.isWatching()
                && leases != null && leases.isWatching()
                && (keyrings == null || keyrings.isWatching())
                && (statusConfigMaps == null || statusConfigMaps.isWatching())
                && lastValidConfigMaps != null && lastValidConfigMaps.isWatching()
                && agentDaemonSets != null && agentDaemonSets.isWatching();
    }

    @Override
    public Optional<String> notServedReason(String group) {
        return Optional.ofNullable(keyringProblems.get(group));
    }

    @Override
    public Optional<String> groupOf(String node) {
        Node n = nodes.getStore().getByKey(node);
        if (n == null) {
            return Optional.empty();
        }
        String g = groupLabel(n);
        GroupModel model = models.get(g);
        return model != null && model.fencingEnabled() ? Optional.of(g) : Optional.empty();
    }

    @Override
    public Optional<GroupModel> model(String group) {
        return Optional.ofNullable(models.get(group));
    }

    /** Every current model. */
    public Map<String, GroupModel> models() {
        return Map.copyOf(models);
    }

    /** The NodeGroup {@code group} as the cache holds it (status included), empty when there is none. */
    public Optional<NodeGroup> nodeGroup(String group) {
        return Optional.ofNullable(groups.getStore().getByKey(group));
    }

    /** The Nodes labelled into {@code group}, from the cache. */
    public List<Node> nodesOf(String group) {
        return nodes.getIndexer().byIndex(BY_GROUP, group);
    }

    // An informer handler calling onChange for an added or updated object and onDelete for a deleted one.
    private static <T> ResourceEventHandler<T> onEvents(Consumer<T> onChange, Consumer<T> onDelete) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T object) {
                onChange.accept(object);
            }

            @Override
            public void onUpdate(T old, T object) {
                onChange.accept(object);
            }

            @Override
            public void onDelete(T object, boolean unknownFinalState) {
                onDelete.accept(object);
            }
        };
    }

    private void markUnserved(String group) {
        if (!group.isEmpty() && !distributor.hasPolicy(group)) {
            mark(group);
        }
    }

    private void mark(String group) {
        if (group == null || group.isEmpty()) {
            return;
        }
        if (dirty.add(group)) {
            publisher.execute(() -> recompute(group));
        }
    }

    private void recompute(String group) {
        dirty.remove(group);
        try {
            NodeGroup ng = groups.getStore().getByKey(group);
            List<Node> members = nodes.getIndexer().byIndex(BY_GROUP, group);
            GroupModel fromCaches = ng == null
                    ? GroupModel.from(NodeGroupSpecs.deleted(group), members, gossipPort)
                    : GroupModel.from(ng, members, gossipPort);
            NetworkAddresses.Result withNetworks = NetworkAddresses.complete(fromCaches,
                    gossipAddresses(members), gossipPort);
            for (String refused : refusals.toLog(group, withNetworks.refused())) {
                LOG.warn("event=network_address_refused group={} {}", group, refused);
            }
            GroupModel model = withNetworks.model();
            if (model.fencingEnabled()) {
                models.put(group, model);
            } else {
                models.remove(group);
            }
            String uid = ng == null ? null : ng.getMetadata().getUid();
            long generation = ng == null || ng.getMetadata().getGeneration() == null ? 0
                    : ng.getMetadata().getGeneration();
            int changes = distributor.publish(model, gossipEncryption ? keyring(group) : null,
                    () -> uid == null ? Optional.empty() : lastValidConfigs.read(group, uid, generation)).size();
            LOG.debug("event=group_published group={} members={} changes={}", group, model.expected().size(),
                    changes);
            modelListeners.forEach(l -> l.accept(model));
        } catch (RuntimeException e) {
            LOG.error("event=group_recompute_failed group={} error=\"{}\"", group, e.toString(), e);
        }
    }

    /**
     * Each member's address per gossip network: the annotation the leader keeps on its Node, else what its agent
     * reported to this replica (before the leader has written it). The annotation comes first because it is the
     * same in every replica and follows the latest report the leader saw; an entry here may be left from a stream
     * that has since moved to another replica.
     */
    private Map<String, Map<String, String>> gossipAddresses(List<Node> members) {
        Map<String, Map<String, String>> out = new HashMap<>(networkAddresses);
        for (Node n : members) {
            Map<String, String> stored = GossipAddressAnnotation.parse(GossipAddressAnnotation.of(n));
            if (!stored.isEmpty()) {
                out.put(n.getMetadata().getName(), stored);
            }
        }
        return out;
    }

    /**
     * {@code group}'s keyring Secret as this replica's informer holds it (empty without gossip encryption); shared
     * with the informer: never to be modified.
     */
    public Optional<Secret> keyringSecret(String group) {
        SharedIndexInformer<Secret> informer = keyrings;
        return informer == null ? Optional.empty()
                : Optional.ofNullable(informer.getStore().getByKey(namespace + "/" + GossipKeyringSecret.name(group)));
    }

    // The group's keyring from its Secret; null (keep the current keyring) when missing or malformed.
    private GossipKeyring keyring(String group) {
        Secret secret = keyrings.getStore().getByKey(namespace + "/" + GossipKeyringSecret.name(group));
        if (secret == null) {
            keyringProblems.put(group, "waiting for the gossip keyring Secret " + namespace + "/"
                    + GossipKeyringSecret.name(group) + " (the leader creates it)");
            return null;
        }
        GossipKeyringSecret.Parsed parsed = GossipKeyringSecret.parse(secret);
        if (parsed.keyring().isEmpty()) {
            LOG.error("event=gossip_keyring_invalid group={} problem=\"{}\" action=\"agents keep the previous keyring\"",
                    group, parsed.problem());
            keyringProblems.put(group, parsed.problem());
            return null;
        }
        keyringProblems.remove(group);
        return parsed.keyring().get();
    }

    private static String keyringGroup(Secret s) {
        return label(s, GossipKeyringSecret.GROUP_LABEL);
    }

    private static String lastValidGroup(ConfigMap cm) {
        return label(cm, LastValidConfigStore.GROUP_LABEL);
    }

    private static String groupLabel(Node n) {
        return label(n, NodeLabels.GROUP);
    }

    // The value of label key on o, "" without it.
    private static String label(io.fabric8.kubernetes.api.model.HasMetadata o, String key) {
        Map<String, String> labels = o.getMetadata().getLabels();
        return labels == null ? "" : labels.getOrDefault(key, "");
    }

    @Override
    public void close() {
        if (nodes != null) {
            nodes.close();
        }
        if (groups != null) {
            groups.close();
        }
        if (keyrings != null) {
            keyrings.close();
        }
        if (leases != null) {
            leases.close();
        }
        if (statusConfigMaps != null) {
            statusConfigMaps.close();
        }
        if (lastValidConfigMaps != null) {
            lastValidConfigMaps.close();
        }
        if (agentDaemonSets != null) {
            agentDaemonSets.close();
        }
        publisher.shutdownNow();
        try {
            publisher.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
