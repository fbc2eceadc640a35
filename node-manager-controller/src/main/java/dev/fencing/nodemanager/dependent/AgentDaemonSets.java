package dev.fencing.nodemanager.dependent;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.config.ControllerConfig;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent DaemonSet as a dependent of its NodeGroup. With server-side apply (production) a reconcile applies the
 * desired DaemonSet (unless nothing changed since, see below) as field manager {@value #FIELD_MANAGER}, forcing conflicts: the API server reverts fields
 * someone else changed ({@code kubectl edit} of the image, a removed toleration), leaves fields it does not own (an
 * annotation another tool added) and writes nothing when the desired state already holds, so server-side defaulting
 * never causes a write loop. Without it (the fabric8 CRUD mock has no SSA) the DaemonSet is created, and replaced
 * only when the desired-spec hash differs; a hand edit then stays until the desired spec changes. Deletion is
 * explicit when fencing is switched off; when the NodeGroup itself is deleted the ownerReference lets the API
 * server's garbage collector remove it, and the controller deletes it too (the mock has no garbage collector).
 *
 * <p>Coexistence (e.g. with Deckhouse's own fencing agent): a {@code fencing-agent-<group>} DaemonSet in the namespace
 * that does not name this NodeGroup (by uid) as its controlling owner is someone else's. It is never updated, applied
 * over or deleted; {@link #apply} reports {@link Outcome#NOT_OWNED} with its owner, and every later reconcile looks
 * again, so the group gets its own DaemonSet once the other one is gone.
 *
 * <p>Requests: the group is reconciled every status interval and at every report change, but a reconcile sends
 * nothing for the DaemonSet while nothing changed on either side since the last write or check: the informer's copy
 * (every replica watches the agent DaemonSets) still has the resourceVersion that write or check left, and the
 * desired DaemonSet is the one sent then (same NodeGroup UID, same desired-spec hash). Any write by anyone (a hand edit,
 * the DaemonSet controller's status, another leader) changes the resourceVersion, so the next reconcile GETs and
 * applies as before; a hand edit is still reverted, one status interval later at most plus the informer's lag.
 */
public final class AgentDaemonSets {

    private static final Logger LOG = LoggerFactory.getLogger(AgentDaemonSets.class);
    /** The field manager of the controller's server-side applies of agent DaemonSets. */
    public static final String FIELD_MANAGER = "node-manager-controller";

    private final KubernetesClient client;
    private final ControllerConfig config;
    private final Function<String, Optional<DaemonSet>> cached;
    private final Supplier<Optional<Duration>> rollHold;
    // Per DaemonSet: the desired hash whose held update was logged last (one line per change, not per reconcile).
    private final Map<String, String> heldLogged = new ConcurrentHashMap<>();
    // DaemonSet name -> what the last write or check saw: which group, which desired state, which resourceVersion.
    private final Map<String, Seen> seen = new ConcurrentHashMap<>();
    // A reconcile that read the NodeGroup just before it was deleted must not recreate its DaemonSet after the
    // deletion handler removed it: both hold the group's lock, and deleted UIDs are remembered (bounded).
    private final Map<String, Object> locks = new ConcurrentHashMap<>();
    private final Set<String> deletedUids = Collections.newSetFromMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > 1024;
        }
    });

    /** Without an informer: every apply reads the DaemonSet from the API server. */
    public AgentDaemonSets(KubernetesClient client, ControllerConfig config) {
        this(client, config, name -> Optional.empty());
    }

    /**
     * @param cached the agent DaemonSet of that name in the namespace as this replica's informer holds it (shared:
     *               only read); lets a reconcile skip the DaemonSet's requests while nothing changed
     */
    public AgentDaemonSets(KubernetesClient client, ControllerConfig config,
                           Function<String, Optional<DaemonSet>> cached) {
        this(client, config, cached, Optional::empty);
    }

    /**
     * @param rollHold while present, why a change of an existing DaemonSet's pods (which rolls the agents, one node
     *                 at a time) must wait: a new leader cannot grant a {@code ControlPlane} tie until it has waited
     *                 out its predecessor's grants, and an agent restarting in a two-node group leaves its peer with
     *                 exactly half, which only that tie-break keeps from fencing. A controller upgrade that changes
     *                 the agents' pods (a new agent image) restarts the controller too, so this is the usual case.
     */
    public AgentDaemonSets(KubernetesClient client, ControllerConfig config,
                           Function<String, Optional<DaemonSet>> cached, Supplier<Optional<Duration>> rollHold) {
        this.client = client;
        this.config = config;
        this.cached = cached;
        this.rollHold = rollHold;
    }

    /** What the last write or check of a DaemonSet left: for the NodeGroup {@code uid}, {@code desired} held. */
    private record Seen(String uid, String desired, String resourceVersion) {
    }

    /** What {@link #apply} did. */
    public enum Outcome {
        CREATED, UPDATED, UNCHANGED,
        /** The DaemonSet's pods would change, but the roll waits (see the constructor's {@code rollHold}). */
        HELD,
        /** A DaemonSet of that name exists that this NodeGroup does not control: left alone. */
        NOT_OWNED
    }

    /**
     * The result of {@link #apply}.
     *
     * @param outcome   what was done
     * @param daemonSet {@code <namespace>/<name>} of the group's DaemonSet
     * @param owner     with {@link Outcome#NOT_OWNED}: who owns the DaemonSet found instead, for humans; else empty
     */
    public record Applied(Outcome outcome, String daemonSet, String owner) {
    }

    /** Creates or updates the group's DaemonSet, unless one of that name belongs to someone else. */
    public Applied apply(NodeGroup group) {
        synchronized (lock(group.getMetadata().getName())) {
            synchronized (deletedUids) {
                if (deletedUids.contains(group.getMetadata().getUid())) {
                    return applied(group, Outcome.UNCHANGED, "");
                }
            }
            return applyLocked(group);
        }
    }

    /** The NodeGroup was deleted: delete its DaemonSet (if it owned it) and never recreate it for that UID. */
    public boolean groupDeleted(String group, String uid) {
        synchronized (lock(group)) {
            synchronized (deletedUids) {
                deletedUids.add(uid);
            }
            return delete(group, uid);
        }
    }

    private Object lock(String group) {
        return locks.computeIfAbsent(group, g -> new Object());
    }

    private Applied applied(NodeGroup group, Outcome outcome, String owner) {
        return new Applied(outcome, config.namespace() + "/" + AgentDaemonSetFactory.name(
                group.getMetadata().getName()), owner);
    }

    private Applied applyLocked(NodeGroup group) {
        DaemonSet desired = AgentDaemonSetFactory.desired(group, config);
        String name = desired.getMetadata().getName();
        String uid = group.getMetadata().getUid();
        // The desired spec and labels as hashed into the annotation; the rest of the metadata is the name, the
        // namespace and the owner, whose UID is compared on its own.
        String want = desired.getMetadata().getAnnotations().get(AgentDaemonSetFactory.HASH_ANNOTATION);
        Seen last = seen.get(name);
        Optional<DaemonSet> inCache = cached.apply(name);
        if (last != null && inCache.isPresent() && Objects.equals(last.uid(), uid) && last.desired().equals(want)
                && last.resourceVersion().equals(inCache.get().getMetadata().getResourceVersion())) {
            return applied(group, Outcome.UNCHANGED, "");
        }
        seen.remove(name);
        Written result = writeLocked(group, desired, want);
        if (result.resourceVersion() != null) {
            seen.put(name, new Seen(uid, want, result.resourceVersion()));
        }
        return result.applied();
    }

    /** What a write or check did, and the resourceVersion of the DaemonSet it left (null when not ours). */
    private record Written(Applied applied, String resourceVersion) {
    }

    private Written writeLocked(NodeGroup group, DaemonSet desired, String wantHash) {
        String name = desired.getMetadata().getName();
        DaemonSet existing = client.apps().daemonSets().inNamespace(config.namespace()).withName(name).get();
        if (existing != null && !controlledBy(existing, group.getMetadata().getUid())) {
            String owner = owner(existing);
            LOG.warn("event=daemonset_not_owned group={} daemonset={}/{} owner=\"{}\"", group.getMetadata().getName(),
                    config.namespace(), name, owner);
            return new Written(applied(group, Outcome.NOT_OWNED, owner), null);
        }
        Optional<Duration> hold = rollHold.get();
        if (existing != null && hold.isPresent() && !Objects.equals(wantHash, hashOf(existing))) {
            if (!wantHash.equals(heldLogged.put(name, wantHash))) {
                LOG.info("event=daemonset_update_held group={} daemonset={}/{} for_ms={} reason=\"a new controller"
                        + " leader grants no ControlPlane tie until it has waited out its predecessor's grants; an"
                        + " agent restarting before that could leave a two-node group's peer with exactly half and no"
                        + " answer\"", group.getMetadata().getName(), config.namespace(), name, hold.get().toMillis());
            }
            return new Written(applied(group, Outcome.HELD, ""), null);
        }
        heldLogged.remove(name);
        if (config.serverSideApply()) {
            DaemonSet applied = client.apps().daemonSets().inNamespace(config.namespace()).resource(desired)
                    .fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
            return new Written(applied(group, serverSideApplied(group, name, existing, applied), ""),
                    applied.getMetadata().getResourceVersion());
        }
        if (existing == null) {
            DaemonSet created = client.apps().daemonSets().inNamespace(config.namespace()).resource(desired).create();
            LOG.info("event=daemonset_created group={} daemonset={}/{}", group.getMetadata().getName(),
                    config.namespace(), name);
            return new Written(applied(group, Outcome.CREATED, ""), created.getMetadata().getResourceVersion());
        }
        if (Objects.equals(hashOf(existing), wantHash)) {
            return new Written(applied(group, Outcome.UNCHANGED, ""), existing.getMetadata().getResourceVersion());
        }
        desired.getMetadata().setResourceVersion(existing.getMetadata().getResourceVersion());
        DaemonSet updated = client.apps().daemonSets().inNamespace(config.namespace()).resource(desired).update();
        LOG.info("event=daemonset_updated group={} daemonset={}/{}", group.getMetadata().getName(),
                config.namespace(), name);
        return new Written(applied(group, Outcome.UPDATED, ""), updated.getMetadata().getResourceVersion());
    }

    private static String hashOf(DaemonSet daemonSet) {
        Map<String, String> annotations = daemonSet.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(AgentDaemonSetFactory.HASH_ANNOTATION);
    }

    /** True when the NodeGroup with {@code uid} is the DaemonSet's controlling owner. */
    static boolean controlledBy(DaemonSet daemonSet, String uid) {
        List<OwnerReference> refs = daemonSet.getMetadata().getOwnerReferences();
        return refs != null && uid != null && refs.stream().anyMatch(r -> Boolean.TRUE.equals(r.getController())
                && NodeGroup.KIND.equals(r.getKind()) && uid.equals(r.getUid()));
    }

    /**
     * Who a foreign DaemonSet belongs to, for the condition message: its controlling owner, else the tool its
     * labels name (Helm charts and Deckhouse modules set one), else the managers that wrote it.
     */
    static String owner(DaemonSet daemonSet) {
        List<OwnerReference> refs = Objects.requireNonNullElse(daemonSet.getMetadata().getOwnerReferences(),
                List.of());
        for (OwnerReference r : refs) {
            if (Boolean.TRUE.equals(r.getController())) {
                return r.getKind() + " " + r.getName() + " (uid " + r.getUid() + ")";
            }
        }
        Map<String, String> labels = Objects.requireNonNullElse(daemonSet.getMetadata().getLabels(), Map.of());
        for (String key : List.of("app.kubernetes.io/managed-by", "heritage")) {
            if (labels.containsKey(key)) {
                return "no controlling owner; labelled " + key + "=" + labels.get(key);
            }
        }
        List<ManagedFieldsEntry> managers = Objects.requireNonNullElse(daemonSet.getMetadata().getManagedFields(),
                List.of());
        String written = managers.stream().map(ManagedFieldsEntry::getManager).filter(Objects::nonNull).distinct()
                .collect(Collectors.joining(", "));
        return written.isEmpty() ? "no controlling owner" : "no controlling owner; written by " + written;
    }

    private Outcome serverSideApplied(NodeGroup group, String name, DaemonSet existing, DaemonSet applied) {
        if (existing == null) {
            LOG.info("event=daemonset_created group={} daemonset={}/{} apply=server-side",
                    group.getMetadata().getName(), config.namespace(), name);
            return Outcome.CREATED;
        }
        if (!changedByApply(existing, applied)) {
            return Outcome.UNCHANGED;
        }
        LOG.info("event=daemonset_updated group={} daemonset={}/{} apply=server-side", group.getMetadata().getName(),
                config.namespace(), name);
        return Outcome.UPDATED;
    }

    /**
     * Whether a server-side apply changed the DaemonSet. The API server does not write an apply that changes nothing
     * (the resourceVersion stays), but it does write one whose only effect is bookkeeping of managedFields: when
     * another manager's entry carries the same second as ours, the new timestamp re-sorts the entries and the server
     * counts that as a change. Such a write changes neither the spec (the generation stays) nor the labels,
     * annotations or owners, rolls no pod and is not an update an operator needs to hear about.
     */
    static boolean changedByApply(DaemonSet before, DaemonSet after) {
        ObjectMeta was = before.getMetadata();
        ObjectMeta is = after.getMetadata();
        if (Objects.equals(was.getResourceVersion(), is.getResourceVersion())) {
            return false;
        }
        return was.getGeneration() == null || !Objects.equals(was.getGeneration(), is.getGeneration())
                || !Objects.equals(was.getLabels(), is.getLabels())
                || !Objects.equals(was.getAnnotations(), is.getAnnotations())
                || !Objects.equals(was.getOwnerReferences(), is.getOwnerReferences());
    }

    /**
     * Deletes the group's DaemonSet if present and controlled by the NodeGroup {@code uid}; agents disarm on SIGTERM.
     * Someone else's DaemonSet of that name stays.
     */
    public boolean delete(String group, String uid) {
        String name = AgentDaemonSetFactory.name(group);
        seen.remove(name);
        DaemonSet existing = client.apps().daemonSets().inNamespace(config.namespace()).withName(name).get();
        if (existing == null) {
            return false;
        }
        if (!controlledBy(existing, uid)) {
            LOG.info("event=daemonset_not_deleted group={} daemonset={}/{} owner=\"{}\"", group, config.namespace(),
                    name, owner(existing));
            return false;
        }
        boolean deleted = !client.apps().daemonSets().inNamespace(config.namespace()).withName(name).delete().isEmpty();
        if (deleted) {
            LOG.info("event=daemonset_deleted group={} daemonset={}/{}", group, config.namespace(), name);
        }
        return deleted;
    }
}
