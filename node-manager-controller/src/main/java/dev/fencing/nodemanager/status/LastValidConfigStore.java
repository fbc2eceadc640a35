package dev.fencing.nodemanager.status;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.DiscardUnknownFieldsParser;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.policy.PolicyProtos;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import dev.fencing.proto.nodemanager.v1.Member;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
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
 * with only group, policy and members: never a key), data {@value #GENERATION_KEY} (the NodeGroup generation the
 * leader reconciled when it wrote them) and {@value #SUMMARY_KEY} for people, label
 * {@value #GROUP_LABEL}{@code =<group>}, owned by the NodeGroup (the garbage collector removes it with the group; the
 * leader also deletes it when fencing is switched off). The leader writes what it serves, also while the spec is
 * invalid (then the frozen pair), stamped with the generation of the model it served it for: a new generation or a
 * newly frozen pair at once, other changes at most once per {@link #MIN_WRITE_INTERVAL_NANOS}; every replica
 * watches these ConfigMaps ({@code ClusterCache}). A replica seeds from one only for the NodeGroup that owns it and
 * at the generation it carries (one written before the NodeGroup's spec last changed, e.g. by a version rolled back
 * to, may be older than what was served since), and only when it holds what agents accept. Anything else counts as
 * none, logged once per version.
 */
public final class LastValidConfigStore {

    private static final Logger LOG = LoggerFactory.getLogger(LastValidConfigStore.class);

    /** Label on these ConfigMaps; its value is the group. */
    public static final String GROUP_LABEL = "node-manager.deckhouse.io/group-config";
    /** The binary data key holding the {@link GroupConfig}. */
    public static final String DATA_KEY = "config.pb";
    /** A one-line description for people ({@code kubectl get cm -o yaml}); never read. */
    public static final String SUMMARY_KEY = "summary";
    /** The data key holding the NodeGroup generation the content was written at. */
    public static final String GENERATION_KEY = "generation";
    /** More members than any group has: a ConfigMap listing more is not read. */
    static final int MAX_MEMBERS = 10_000;
    /**
     * Changes at the same generation are written at most this often per group (a new generation or a newly frozen
     * pair at once).
     */
    static final long MIN_WRITE_INTERVAL_NANOS = 10_000_000_000L;

    /** How long a write counts as not yet in the informer's cache. */
    static final long CACHE_LAG_NANOS = 5_000_000_000L;
    /** How long a refused write of the same content waits before it is tried again (reconciles come often). */
    static final long RETRY_NANOS = 30_000_000_000L;

    private final String namespace;
    private final GroupConfigMaps maps;
    private final Function<String, Optional<ConfigMap>> cached;
    private final LongSupplier nanoTime;
    // Per ConfigMap name: the last version parsed and its outcome, so the cache is parsed once per change.
    private final Map<String, Parsed> parsed = new ConcurrentHashMap<>();
    // Per group: the last write this replica attempted, when, and whether the API server took it: not repeated while
    // the informer lags behind it, or at every reconcile when refused, and the start of the write interval.
    private final Map<String, Attempt> attempts = new ConcurrentHashMap<>();
    // Per group: why what is served could not be kept, logged once per reason.
    private final Map<String, String> unkeepable = new ConcurrentHashMap<>();
    // Per ConfigMap name: the version whose problem was logged.
    private final Map<String, String> problemsLogged = new ConcurrentHashMap<>();

    private record Parsed(String resourceVersion, String ownerUid, Optional<Kept> kept, String problem) {
    }

    /** What a ConfigMap of this store holds: the served config and the NodeGroup generation it was written at. */
    public record Kept(GroupConfig config, long generation) {
    }

    private record Attempt(Kept kept, long atNanos, boolean written) {
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
        this.namespace = namespace;
        this.maps = new GroupConfigMaps(client, namespace, serverSideApply);
        this.cached = cached;
        this.nanoTime = nanoTime;
    }

    /** {@code fencing-config-<group>}. */
    public static String name(String group) {
        return "fencing-config-" + group;
    }

    /**
     * The policy and members to serve the NodeGroup {@code group} with UID {@code uid} at {@code generation}; empty
     * when there is no such ConfigMap, or it belongs to another NodeGroup of this name, or was written at another
     * generation, or cannot be served (each logged once per version).
     */
    public Optional<GroupConfig> read(String group, String uid, long generation) {
        Optional<Parsed> owned = owned(group, uid);
        if (owned.isEmpty()) {
            return Optional.empty();
        }
        Kept kept = owned.get().kept().orElseThrow();
        if (kept.generation() != generation) {
            logOnce(name(group), owned.get().resourceVersion() + "/generation", "it was written at NodeGroup"
                    + " generation " + kept.generation() + " and the NodeGroup is at " + generation + ": what was"
                    + " served since may differ");
            return Optional.empty();
        }
        return Optional.of(kept.config());
    }

    // The cached ConfigMap, parsed, when it holds content and belongs to the NodeGroup with UID uid.
    private Optional<Parsed> owned(String group, String uid) {
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
        if (p.kept().isEmpty()) {
            logOnce(name, version, p.problem());
            return Optional.empty();
        }
        if (!Objects.equals(p.ownerUid(), uid)) {
            logOnce(name, version + "/owner", "it belongs to another NodeGroup of this name (owner uid "
                    + p.ownerUid() + ", this group's " + uid + ")");
            return Optional.empty();
        }
        return Optional.of(p);
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
     * What a ConfigMap of this store holds for {@code group}, fields unknown to this version dropped.
     *
     * @throws IllegalArgumentException when it has no {@value #DATA_KEY} or {@value #GENERATION_KEY}, those are no
     *                                  {@link GroupConfig} or number, or what it holds is not what a controller
     *                                  serves and agents accept: another group, no policy, a policy its agents
     *                                  would refuse for that many members ({@link PolicyProtos#fromProto}: e.g. a
     *                                  quorum size that is not a strict majority, a missing timing), more than
     *                                  {@value #MAX_MEMBERS} members, a member without a name, listed twice, or
     *                                  without an IP:port gossip address, or any key (keys come only from the
     *                                  keyring Secret)
     */
    public static Kept parse(ConfigMap cm, String group) {
        String encoded = cm.getBinaryData() == null ? null : cm.getBinaryData().get(DATA_KEY);
        if (encoded == null || encoded.isBlank()) {
            throw new IllegalArgumentException("no binary data key " + DATA_KEY);
        }
        String stamp = cm.getData() == null ? null : cm.getData().get(GENERATION_KEY);
        long generation;
        try {
            generation = Long.parseLong(Objects.requireNonNullElse(stamp, "").strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("data key " + GENERATION_KEY + " is not a NodeGroup generation");
        }
        GroupConfig config;
        try {
            config = DiscardUnknownFieldsParser.wrap(GroupConfig.parser())
                    .parseFrom(Base64.getDecoder().decode(encoded.strip()));
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
        if (config.getMembersCount() > MAX_MEMBERS) {
            throw new IllegalArgumentException(DATA_KEY + " lists " + config.getMembersCount() + " members, more than "
                    + MAX_MEMBERS);
        }
        try {
            PolicyProtos.fromProto(config.getPolicy(), config.getMembersCount());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(DATA_KEY + " holds a policy agents refuse: "
                    + String.valueOf(e.getMessage()).replace('"', '\''), e);
        }
        Set<String> names = new HashSet<>();
        for (Member m : config.getMembersList()) {
            boolean addresses = ipPort(m.getGossipAddress())
                    && m.getGossipAddressesMap().values().stream().allMatch(LastValidConfigStore::ipPort);
            if (m.getName().isEmpty() || !addresses || !names.add(m.getName())) {
                throw new IllegalArgumentException(DATA_KEY + " has a member without a name, listed twice, or"
                        + " without an IP:port gossip address ('" + m.getName() + "')");
            }
        }
        return new Kept(config, generation);
    }

    // "198.18.0.1:9651" or "[2001:db8::1]:9651": an IP literal (never a name to resolve) and a port.
    static boolean ipPort(String value) {
        int colon = value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1) {
            return false;
        }
        String host = value.substring(0, colon);
        boolean v6 = host.startsWith("[") && host.endsWith("]");
        if (v6) {
            host = host.substring(1, host.length() - 1);
        }
        // Only literals reach InetAddress, so nothing is ever looked up in DNS.
        boolean literal = v6 ? host.indexOf(':') >= 0 && host.matches("[0-9a-fA-F:.]+")
                : host.matches("\\d{1,3}(\\.\\d{1,3}){3}");
        int port;
        try {
            port = Integer.parseInt(value.substring(colon + 1));
        } catch (NumberFormatException e) {
            return false;
        }
        if (!literal || port < 1 || port > 65535) {
            return false;
        }
        try {
            InetAddress.getByName(host);
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    private void logOnce(String name, String version, String problem) {
        if (!version.equals(problemsLogged.put(name, version))) {
            LOG.warn("event=last_valid_config_ignored configmap={}/{} reason=\"{}\" detail=\"a controller that starts"
                    + " while the group's spec is invalid serves its agents nothing\"", namespace, name, problem);
        }
    }

    /**
     * The ConfigMap that keeps {@code config}'s group, policy and members for {@code group}, stamped with
     * {@code generation} (the NodeGroup generation of the model they were served for).
     */
    public static ConfigMap configMap(NodeGroup group, GroupConfig config, long generation, String namespace) {
        String g = group.getMetadata().getName();
        GroupConfig kept = stripped(g, config);
        String summary = kept.getMembersCount() + " members, quorum size " + kept.getPolicy().getQuorumSize()
                + ", mode " + kept.getPolicy().getMode() + ", served at NodeGroup generation " + generation;
        return new ConfigMapBuilder().withMetadata(GroupConfigMaps.metadata(group, name(g), namespace, GROUP_LABEL))
                .withData(Map.of(SUMMARY_KEY, summary, GENERATION_KEY, Long.toString(generation)))
                .withBinaryData(Map.of(DATA_KEY, Base64.getEncoder().encodeToString(deterministic(kept))))
                .build();
    }

    private static GroupConfig stripped(String group, GroupConfig config) {
        return GroupConfig.newBuilder().setGroup(group).setPolicy(config.getPolicy())
                .addAllMembers(config.getMembersList()).build();
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
     * Keeps what {@code group}'s agents are served ({@code config}: its group, policy and members), stamped with
     * {@code generation}, unless the cache already holds exactly that. A new generation or a newly frozen pair
     * ({@code frozen}: the spec is invalid, so this is what a restarted replica must serve) is written at once; other
     * changes at most once per {@link #MIN_WRITE_INTERVAL_NANOS} after the last attempt (the caller asks again at its
     * next reconcile). Not repeated while this replica's own write of the same may not be in the cache yet
     * ({@link #CACHE_LAG_NANOS}). Content this store would not read back (e.g. an address it does not take) and a
     * refused write delete the older content (a replica must rather serve nothing than what is no longer served);
     * the same refused content is tried again after {@link #RETRY_NANOS}.
     *
     * @return whether the ConfigMap now holds it
     */
    public boolean keep(NodeGroup group, GroupConfig config, long generation, boolean frozen) {
        String g = group.getMetadata().getName();
        Kept kept = new Kept(stripped(g, config), generation);
        if (owned(g, group.getMetadata().getUid()).flatMap(Parsed::kept).filter(kept::equals).isPresent()) {
            return true;
        }
        long now = nanoTime.getAsLong();
        Attempt last = attempts.get(g);
        if (last != null && kept.equals(last.kept())
                && now - last.atNanos() < (last.written() ? CACHE_LAG_NANOS : RETRY_NANOS)) {
            return last.written();
        }
        if (!frozen && last != null && last.kept().generation() == generation
                && now - last.atNanos() < MIN_WRITE_INTERVAL_NANOS) {
            return false;
        }
        ConfigMap desired = configMap(group, kept.config(), generation, namespace);
        try {
            parse(desired, g);
        } catch (IllegalArgumentException e) {
            if (!e.getMessage().equals(unkeepable.put(g, e.getMessage()))) {
                LOG.warn("event=last_valid_config_not_kept group={} configmap={}/{} reason=\"{}\" detail=\"a replica"
                        + " that starts while the spec is invalid serves this group nothing\"", g, namespace, name(g),
                        e.getMessage());
            }
            if (cached.apply(g).isPresent()) {
                deleteNow(g, "what is served now cannot be kept, and the older content is no longer served");
            }
            return false;
        }
        unkeepable.remove(g);
        try {
            maps.apply(desired);
            attempts.put(g, new Attempt(kept, now, true));
            LOG.debug("event=last_valid_config_kept group={} configmap={}/{} members={} generation={} frozen={}", g,
                    namespace, name(g), kept.config().getMembersCount(), generation, frozen);
            return true;
        } catch (KubernetesClientException e) {
            attempts.put(g, new Attempt(kept, now, false));
            LOG.warn("event=last_valid_config_write_failed group={} configmap={}/{} code={} message=\"{}\" detail=\"the"
                    + " older content is deleted; this content is tried again in 30s\"", g, namespace, name(g),
                    e.getCode(), GroupConfigMaps.firstLine(e));
            if (cached.apply(g).isPresent()) {
                deleteNow(g, "its content is older than what is served and could not be replaced");
            }
            return false;
        }
    }

    /**
     * Deletes {@code group}'s ConfigMap when the informer holds one owned by the NodeGroup with UID {@code uid}
     * (fencing switched off, or the group deleted: what the garbage collector also does then). Cheap without one:
     * the caller may ask at every reconcile, so a failed delete is tried again.
     */
    public void delete(String group, String uid) {
        if (cached.apply(group).filter(cm -> Objects.equals(GroupStatusStore.ownerUid(cm), uid)).isPresent()) {
            attempts.remove(group);
            deleteNow(group, "fencing is off or the group is gone");
        }
    }

    private void deleteNow(String group, String why) {
        try {
            maps.delete(name(group));
            LOG.info("event=last_valid_config_deleted group={} configmap={}/{} reason=\"{}\"", group, namespace,
                    name(group), why);
        } catch (KubernetesClientException e) {
            LOG.warn("event=last_valid_config_delete_failed group={} configmap={}/{} code={} message=\"{}\"", group,
                    namespace, name(group), e.getCode(), GroupConfigMaps.firstLine(e));
        }
    }
}
