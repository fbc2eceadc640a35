package dev.fencing.nodemanager.dependent;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.config.ControllerConfig;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent DaemonSet as a dependent of its NodeGroup. With server-side apply (production) every reconcile applies
 * the desired DaemonSet as field manager {@value #FIELD_MANAGER}, forcing conflicts: the API server reverts fields
 * someone else changed ({@code kubectl edit} of the image, a removed toleration), leaves fields it does not own (an
 * annotation another tool added) and writes nothing when the desired state already holds, so server-side defaulting
 * never causes a write loop. Without it (the fabric8 CRUD mock has no SSA) the DaemonSet is created, and replaced
 * only when the desired-spec hash differs; a hand edit then stays until the desired spec changes. Deletion is
 * explicit when fencing is switched off; when the NodeGroup itself is deleted the ownerReference lets the API
 * server's garbage collector remove it, and the controller deletes it too (the mock has no garbage collector).
 */
public final class AgentDaemonSets {

    private static final Logger LOG = LoggerFactory.getLogger(AgentDaemonSets.class);
    /** The field manager of the controller's server-side applies of agent DaemonSets. */
    public static final String FIELD_MANAGER = "node-manager-controller";

    private final KubernetesClient client;
    private final ControllerConfig config;
    // A reconcile that read the NodeGroup just before it was deleted must not recreate its DaemonSet after the
    // deletion handler removed it: both hold the group's lock, and deleted UIDs are remembered (bounded).
    private final Map<String, Object> locks = new ConcurrentHashMap<>();
    private final Set<String> deletedUids = Collections.newSetFromMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > 1024;
        }
    });

    public AgentDaemonSets(KubernetesClient client, ControllerConfig config) {
        this.client = client;
        this.config = config;
    }

    /** What {@link #apply} did. */
    public enum Outcome { CREATED, UPDATED, UNCHANGED }

    /** Creates or updates the group's DaemonSet. */
    public Outcome apply(NodeGroup group) {
        synchronized (lock(group.getMetadata().getName())) {
            synchronized (deletedUids) {
                if (deletedUids.contains(group.getMetadata().getUid())) {
                    return Outcome.UNCHANGED;
                }
            }
            return applyLocked(group);
        }
    }

    /** The NodeGroup was deleted: delete its DaemonSet and never recreate it for that UID. */
    public boolean groupDeleted(String group, String uid) {
        synchronized (lock(group)) {
            synchronized (deletedUids) {
                deletedUids.add(uid);
            }
            return delete(group);
        }
    }

    private Object lock(String group) {
        return locks.computeIfAbsent(group, g -> new Object());
    }

    private Outcome applyLocked(NodeGroup group) {
        DaemonSet desired = AgentDaemonSetFactory.desired(group, config);
        String name = desired.getMetadata().getName();
        DaemonSet existing = client.apps().daemonSets().inNamespace(config.namespace()).withName(name).get();
        if (config.serverSideApply()) {
            return serverSideApply(group, desired, existing);
        }
        if (existing == null) {
            client.apps().daemonSets().inNamespace(config.namespace()).resource(desired).create();
            LOG.info("event=daemonset_created group={} daemonset={}/{}", group.getMetadata().getName(),
                    config.namespace(), name);
            return Outcome.CREATED;
        }
        String want = desired.getMetadata().getAnnotations().get(AgentDaemonSetFactory.HASH_ANNOTATION);
        Map<String, String> have = existing.getMetadata().getAnnotations();
        if (have != null && Objects.equals(have.get(AgentDaemonSetFactory.HASH_ANNOTATION), want)) {
            return Outcome.UNCHANGED;
        }
        desired.getMetadata().setResourceVersion(existing.getMetadata().getResourceVersion());
        client.apps().daemonSets().inNamespace(config.namespace()).resource(desired).update();
        LOG.info("event=daemonset_updated group={} daemonset={}/{}", group.getMetadata().getName(),
                config.namespace(), name);
        return Outcome.UPDATED;
    }

    private Outcome serverSideApply(NodeGroup group, DaemonSet desired, DaemonSet existing) {
        DaemonSet applied = client.apps().daemonSets().inNamespace(config.namespace()).resource(desired)
                .fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
        String name = desired.getMetadata().getName();
        if (existing == null) {
            LOG.info("event=daemonset_created group={} daemonset={}/{} apply=server-side",
                    group.getMetadata().getName(), config.namespace(), name);
            return Outcome.CREATED;
        }
        // The API server does not write an apply that changes nothing: the resourceVersion stays.
        if (Objects.equals(existing.getMetadata().getResourceVersion(), applied.getMetadata().getResourceVersion())) {
            return Outcome.UNCHANGED;
        }
        LOG.info("event=daemonset_updated group={} daemonset={}/{} apply=server-side", group.getMetadata().getName(),
                config.namespace(), name);
        return Outcome.UPDATED;
    }

    /** Deletes the group's DaemonSet if present; agents disarm on SIGTERM. */
    public boolean delete(String group) {
        String name = AgentDaemonSetFactory.name(group);
        boolean deleted = !client.apps().daemonSets().inNamespace(config.namespace()).withName(name).delete().isEmpty();
        if (deleted) {
            LOG.info("event=daemonset_deleted group={} daemonset={}/{}", group, config.namespace(), name);
        }
        return deleted;
    }
}
