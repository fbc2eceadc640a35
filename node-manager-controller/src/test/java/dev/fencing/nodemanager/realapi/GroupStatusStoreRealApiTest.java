package dev.fencing.nodemanager.realapi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.api.v1.NodeType;
import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.status.GroupStatusStore;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The status ConfigMap (where the NodeGroup CRD's owner defines the status) written to a real kube-apiserver in both
 * write modes: server-side apply (production) and create-or-update (the CRUD mock's). The server accepts the
 * NodeGroup owner reference, a changed status replaces the old one, and what is read back is what was kept.
 */
class GroupStatusStoreRealApiTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.apiServerOnly();

    private static KubernetesClient admin;

    @BeforeAll
    static void installCrd() {
        admin = KUBE.get().adminClient();
        RealApiNodeGroups.installCrd(admin);
    }

    private static NodeGroupStatus status(int expected, String storm) {
        return new NodeGroupStatus().withObservedGeneration(1L).withExpected(expected)
                .withConditions(List.of(new ConditionBuilder().withType("FencingStormLimit").withStatus("True")
                        .withReason(storm).withMessage("held").withLastTransitionTime("2026-11-29T08:00:00Z")
                        .build()));
    }

    @ParameterizedTest(name = "serverSideApply={0}")
    @ValueSource(booleans = {true, false})
    void theLeaderKeepsAndReplacesAGroupsStatusInItsConfigMap(boolean serverSideApply) {
        String ns = RealApiNodeGroups.namespace(admin, KUBE.get().uniqueName("kept"));
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName(KUBE.get().uniqueName("g")).build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC));
        NodeGroup group = admin.resource(g).create();
        GroupStatusStore store = new GroupStatusStore(admin, ns, serverSideApply, name -> Optional.ofNullable(
                admin.configMaps().inNamespace(ns).withName(GroupStatusStore.name(name)).get()));
        store.inNodeGroup(false);

        assertThat(store.keep(group, status(3, "MinHealthy"))).isTrue();
        assertThat(store.read(group)).contains(status(3, "MinHealthy"));
        assertThat(store.keep(group, status(4, "Cooldown"))).isTrue();
        assertThat(store.read(group)).contains(status(4, "Cooldown"));

        ConfigMap cm = admin.configMaps().inNamespace(ns).withName(GroupStatusStore.name(
                group.getMetadata().getName())).get();
        assertThat(cm.getMetadata().getOwnerReferences()).singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo(group.getMetadata().getUid()));
        assertThat(cm.getMetadata().getManagedFields()).extracting(ManagedFieldsEntry::getOperation)
                .containsOnly(serverSideApply ? "Apply" : "Update");

        store.delete(group.getMetadata().getName(), "another-uid");
        assertThat(store.read(group)).isPresent();
        store.delete(group.getMetadata().getName(), group.getMetadata().getUid());
        assertThat(store.read(group)).isEmpty();
        admin.resource(group).delete();
    }
}
