package dev.fencing.nodemanager.status;

import dev.fencing.api.v1.NodeGroup;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import java.util.Map;

/**
 * The leader's per-group ConfigMaps in the controller's namespace ({@link GroupStatusStore},
 * {@link LastValidConfigStore}): their metadata (a label naming the group, owned by the NodeGroup so the garbage
 * collector removes them with it) and how they are written and deleted.
 */
final class GroupConfigMaps {

    private final KubernetesClient client;
    private final String namespace;
    private final boolean serverSideApply;

    /**
     * @param namespace       the controller's namespace, where the ConfigMaps live
     * @param serverSideApply write with server-side apply (else create, or update when it exists)
     */
    GroupConfigMaps(KubernetesClient client, String namespace, boolean serverSideApply) {
        this.client = client;
        this.namespace = namespace;
        this.serverSideApply = serverSideApply;
    }

    /** Name, namespace, {@code label=<group>}, managed-by, and the NodeGroup as controlling owner. */
    static ObjectMeta metadata(NodeGroup group, String name, String namespace, String label) {
        String g = group.getMetadata().getName();
        return new ObjectMetaBuilder().withName(name).withNamespace(namespace)
                .withLabels(Map.of(label, g, "app.kubernetes.io/managed-by", GroupStatusStore.FIELD_MANAGER))
                .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion(group.getApiVersion())
                        .withKind(group.getKind()).withName(g).withUid(group.getMetadata().getUid())
                        .withController(true).withBlockOwnerDeletion(false).build())
                .build();
    }

    /**
     * Writes {@code desired}.
     *
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when the API server refuses it
     */
    void apply(ConfigMap desired) {
        if (serverSideApply) {
            client.configMaps().inNamespace(namespace).resource(desired).fieldManager(GroupStatusStore.FIELD_MANAGER)
                    .forceConflicts().serverSideApply();
        } else {
            client.configMaps().inNamespace(namespace).resource(desired).createOr(NonDeletingOperation::update);
        }
    }

    /**
     * Deletes the ConfigMap {@code name}.
     *
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when the API server refuses it
     */
    void delete(String name) {
        client.configMaps().inNamespace(namespace).withName(name).delete();
    }

    /** The first line of {@code e}'s message, with double quotes made single, for a log field. */
    static String firstLine(Throwable e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        return (nl < 0 ? m : m.substring(0, nl)).replace('"', '\'');
    }
}
