package dev.fencing.nodemanager.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.dependent.AgentDaemonSetFactory;
import dev.fencing.nodemanager.model.GossipKeyringSecret;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The agent DaemonSet and the gossip keyring Secret the controller creates for a NodeGroup are owned by it, and the
 * real garbage collector (kube-controller-manager) removes them when the NodeGroup goes, in background and in
 * foreground deletion. The controller is stopped before the NodeGroup is deleted, so its own clean-up cannot stand
 * in for the garbage collector.
 */
class NodeGroupDeletionGarbageCollectionRealClusterTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.withControllers();
    private static final String HOLD = "fencing.test/hold";

    private KubernetesClient admin;
    private InProcessController controller;
    private String namespace;

    @BeforeEach
    void setUp() throws Exception {
        admin = KUBE.get().adminClient();
        controller = InProcessController.start(KUBE.get(), "gc");
        namespace = controller.namespace();
    }

    @AfterEach
    void tearDown() {
        controller.close();
    }

    @Test
    void backgroundDeletionOfTheNodeGroupLetsTheGarbageCollectorRemoveItsDaemonSetAndKeyring() {
        NodeGroup group = createGroupAndAwaitDependents("gc-bg");
        DaemonSet ds = daemonSet(group);
        Secret keyring = keyring(group);
        assertOwnedBy(ds, group);
        assertThat(ds.getMetadata().getOwnerReferences().get(0).getController()).isTrue();
        assertOwnedBy(keyring, group);

        controller.stop();
        admin.resource(group).withPropagationPolicy(io.fabric8.kubernetes.api.model.DeletionPropagation.BACKGROUND)
                .delete();

        await().atMost(Duration.ofSeconds(30)).until(() -> daemonSet(group) == null && keyring(group) == null);
    }

    @Test
    void foregroundDeletionKeepsTheNodeGroupUntilTheGarbageCollectorHasRemovedItsDaemonSet() {
        NodeGroup group = createGroupAndAwaitDependents("gc-fg");
        assertOwnedBy(daemonSet(group), group);
        // A finalizer of our own holds the DaemonSet once the garbage collector deletes it, so the moment when the
        // dependent is being deleted but not gone can be looked at.
        admin.apps().daemonSets().inNamespace(namespace).withName(AgentDaemonSetFactory.name(name(group)))
                .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"finalizers\":[\"" + HOLD + "\"]}}");

        controller.stop();
        admin.resource(group).withPropagationPolicy(io.fabric8.kubernetes.api.model.DeletionPropagation.FOREGROUND)
                .delete();

        await().atMost(Duration.ofSeconds(30)).until(() -> daemonSet(group).getMetadata().getDeletionTimestamp(),
                t -> t != null);
        NodeGroup deleting = admin.resources(NodeGroup.class).withName(name(group)).get();
        assertThat(deleting).as("a foreground-deleted NodeGroup stays while its agent DaemonSet is being deleted")
                .isNotNull();
        assertThat(deleting.getMetadata().getFinalizers()).contains("foregroundDeletion");

        admin.apps().daemonSets().inNamespace(namespace).withName(AgentDaemonSetFactory.name(name(group)))
                .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"finalizers\":null}}");
        await().atMost(Duration.ofSeconds(30)).until(() -> daemonSet(group) == null && keyring(group) == null
                && admin.resources(NodeGroup.class).withName(name(group)).get() == null);
    }

    private NodeGroup createGroupAndAwaitDependents(String prefix) {
        NodeGroup created = admin.resource(RealCluster.watchdogGroup(KUBE.get().uniqueName(prefix), new Fencing()))
                .create();
        await().atMost(Duration.ofSeconds(30)).until(() -> daemonSet(created) != null && keyring(created) != null);
        return created;
    }

    private static String name(NodeGroup group) {
        return group.getMetadata().getName();
    }

    private DaemonSet daemonSet(NodeGroup group) {
        return admin.apps().daemonSets().inNamespace(namespace).withName(AgentDaemonSetFactory.name(name(group)))
                .get();
    }

    private Secret keyring(NodeGroup group) {
        return admin.secrets().inNamespace(namespace).withName(GossipKeyringSecret.name(name(group))).get();
    }

    // blockOwnerDeletion=true makes a foreground deletion of the NodeGroup wait for this object.
    private static void assertOwnedBy(HasMetadata dependent, NodeGroup group) {
        assertThat(dependent.getMetadata().getOwnerReferences()).singleElement().satisfies((OwnerReference ref) -> {
            assertThat(ref.getApiVersion()).isEqualTo("deckhouse.io/v1");
            assertThat(ref.getKind()).isEqualTo("NodeGroup");
            assertThat(ref.getName()).isEqualTo(name(group));
            assertThat(ref.getUid()).isEqualTo(group.getMetadata().getUid());
            assertThat(ref.getBlockOwnerDeletion()).isTrue();
        });
    }
}
