package dev.fencing.nodemanager.realapi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.status.LastValidConfigStore;
import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.PolicyProtos;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import dev.fencing.proto.nodemanager.v1.Member;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The ConfigMap keeping a group's last valid policy and members, written to a real kube-apiserver in both write
 * modes: server-side apply (production) and create-or-update (the CRUD mock's). The server takes the binary data
 * and the NodeGroup owner reference, a change replaces what was kept, and what is read back is what was kept.
 */
class LastValidConfigStoreRealApiTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.apiServerOnly();

    private static KubernetesClient admin;

    @BeforeAll
    static void installCrd() {
        admin = KUBE.get().adminClient();
        RealApiNodeGroups.installCrd(admin);
    }

    private static GroupConfig served(String group, int members) {
        GroupConfig.Builder b = GroupConfig.newBuilder().setGroup(group)
                .setPolicy(PolicyProtos.toProto(PolicyResolver.resolve(FencingSpec.DEFAULTS, members)));
        for (int i = 1; i <= members; i++) {
            b.addMembers(Member.newBuilder().setName("n-" + i).setGossipAddress("198.18.0." + i + ":9651")
                    .putAddresses("InternalIP", "198.18.0." + i).putAddresses("Hostname", "n-" + i));
        }
        return b.build();
    }

    @ParameterizedTest(name = "serverSideApply={0}")
    @ValueSource(booleans = {true, false})
    void theLeaderKeepsAndReplacesAGroupsServedConfigInItsConfigMap(boolean serverSideApply) {
        String ns = RealApiNodeGroups.namespace(admin, KUBE.get().uniqueName("served"));
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName(KUBE.get().uniqueName("g")).build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC));
        NodeGroup group = admin.resource(g).create();
        String name = group.getMetadata().getName();
        String uid = group.getMetadata().getUid();
        long generation = group.getMetadata().getGeneration();
        LastValidConfigStore store = new LastValidConfigStore(admin, ns, serverSideApply, n -> Optional.ofNullable(
                admin.configMaps().inNamespace(ns).withName(LastValidConfigStore.name(n)).get()));

        assertThat(store.keep(group, served(name, 3), generation, false)).isTrue();
        assertThat(store.read(name, uid, generation)).contains(served(name, 3));
        // Another generation: written at once (members alone would wait for the write interval).
        generation++;
        assertThat(store.keep(group, served(name, 5), generation, false)).isTrue();
        assertThat(store.read(name, uid, generation)).contains(served(name, 5));

        ConfigMap cm = admin.configMaps().inNamespace(ns).withName(LastValidConfigStore.name(name)).get();
        assertThat(cm.getMetadata().getOwnerReferences()).singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo(uid));
        assertThat(cm.getData()).containsKey(LastValidConfigStore.SUMMARY_KEY)
                .containsEntry(LastValidConfigStore.GENERATION_KEY, Long.toString(generation));
        assertThat(cm.getMetadata().getManagedFields()).extracting(ManagedFieldsEntry::getOperation)
                .containsOnly(serverSideApply ? "Apply" : "Update");

        store.delete(name, "another-uid");
        assertThat(store.read(name, uid, generation)).isPresent();
        store.delete(name, uid);
        assertThat(store.read(name, uid, generation)).isEmpty();
        admin.resource(group).delete();
    }
}
