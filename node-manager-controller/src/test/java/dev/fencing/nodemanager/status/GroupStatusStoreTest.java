package dev.fencing.nodemanager.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.api.v1.FencedNode;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupStatus;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The status ConfigMap's shape and how a leader reads it back, without a server. */
class GroupStatusStoreTest {

    private static final KubernetesSerialization JSON = new KubernetesSerialization();
    private static final String NS = "fencing-system";
    // Never connected: the store only takes its serialization from it in these tests.
    private static KubernetesClient client;

    @BeforeAll
    static void client() {
        client = new KubernetesClientBuilder().withConfig(new ConfigBuilder().withMasterUrl("https://127.0.0.1:1")
                .build()).build();
    }

    @AfterAll
    static void close() {
        client.close();
    }

    private static NodeGroup group(String name, String uid) {
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName(name).withUid(uid).build());
        return g;
    }

    private static NodeGroupStatus status() {
        return new NodeGroupStatus().withObservedGeneration(3L).withExpected(5)
                .withFencedNodes(List.of(new FencedNode().withName("workers-4").withFencedAt("2026-11-29T07:00:00Z")))
                .withConditions(List.of(new ConditionBuilder().withType("FencingStormLimit").withStatus("True")
                        .withReason("Cooldown").withMessage("m").withLastTransitionTime("2026-11-29T07:00:00Z")
                        .build()));
    }

    private static ConfigMap withVersion(ConfigMap cm, String version) {
        return new ConfigMapBuilder(cm).editMetadata().withResourceVersion(version).endMetadata().build();
    }

    @Test
    void theConfigMapIsNamedLabelledAndOwnedByItsGroupAndCarriesTheStatusAsJson() {
        ConfigMap cm = GroupStatusStore.configMap(group("workers", "uid-1"), status(), NS, JSON);

        assertThat(cm.getMetadata().getName()).isEqualTo("fencing-status-workers");
        assertThat(cm.getMetadata().getNamespace()).isEqualTo(NS);
        assertThat(cm.getMetadata().getLabels()).containsEntry(GroupStatusStore.GROUP_LABEL, "workers");
        assertThat(cm.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
            assertThat(o.getApiVersion()).isEqualTo("deckhouse.io/v1");
            assertThat(o.getKind()).isEqualTo("NodeGroup");
            assertThat(o.getName()).isEqualTo("workers");
            assertThat(o.getUid()).isEqualTo("uid-1");
            assertThat(o.getController()).isTrue();
        });
        assertThat(cm.getData()).containsOnlyKeys(GroupStatusStore.DATA_KEY);
        assertThat(GroupStatusStore.parse(cm, JSON)).isEqualTo(status());
    }

    @Test
    void contentThatIsNotAStatusIsRefusedWithWhatIsWrong() {
        ConfigMap empty = new ConfigMapBuilder().withNewMetadata().withName("fencing-status-workers").endMetadata()
                .build();
        assertThatThrownBy(() -> GroupStatusStore.parse(empty, JSON)).hasMessage("no data key status.json");
        for (String bad : List.of("{\"fencedNodes\": 7", "[1, 2]", "{\"expected\": \"many\"}")) {
            ConfigMap cm = new ConfigMapBuilder(empty).withData(Map.of(GroupStatusStore.DATA_KEY, bad)).build();
            assertThatThrownBy(() -> GroupStatusStore.parse(cm, JSON)).as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("status.json is not a NodeGroup status: ");
        }
        ConfigMap nul = new ConfigMapBuilder(empty).withData(Map.of(GroupStatusStore.DATA_KEY, "null")).build();
        assertThatThrownBy(() -> GroupStatusStore.parse(nul, JSON)).hasMessage("status.json is not a JSON object");
    }

    @Test
    void inNodeGroupModeTheStatusIsTheNodeGroupsOwn() {
        GroupStatusStore store = new GroupStatusStore(client, NS, true, g -> {
            throw new AssertionError("no ConfigMap is read where status is kept in the NodeGroup");
        });
        NodeGroup g = group("workers", "uid-1");
        assertThat(store.read(g)).isEmpty();
        g.setStatus(status());
        assertThat(store.read(g)).contains(status());
        assertThatThrownBy(() -> store.keep(g, status())).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void inConfigMapModeTheCachedConfigMapOfThisGroupIsReadAndFollowedAcrossVersions() {
        AtomicReference<ConfigMap> cached = new AtomicReference<>();
        GroupStatusStore store = new GroupStatusStore(client, NS, true, g -> Optional.ofNullable(cached.get())
                .filter(cm -> cm.getMetadata().getName().equals(GroupStatusStore.name(g))));
        store.inNodeGroup(false);
        NodeGroup g = group("workers", "uid-1");
        // The NodeGroup's own status (the platform's) is never taken for ours.
        g.setStatus(new NodeGroupStatus().withExpected(99));
        assertThat(store.read(g)).isEmpty();

        cached.set(withVersion(GroupStatusStore.configMap(g, status(), NS, JSON), "10"));
        assertThat(store.read(g)).contains(status());
        NodeGroupStatus later = status().withExpected(6);
        cached.set(withVersion(GroupStatusStore.configMap(g, later, NS, JSON), "11"));
        assertThat(store.read(g)).contains(later);

        // Unparseable: no status (the next leader starts from nothing), and a good version later is read again.
        cached.set(withVersion(new ConfigMapBuilder(cached.get()).withData(Map.of(GroupStatusStore.DATA_KEY, "{"))
                .build(), "12"));
        assertThat(store.read(g)).isEmpty();
        cached.set(withVersion(GroupStatusStore.configMap(g, status(), NS, JSON), "13"));
        assertThat(store.read(g)).contains(status());

        cached.set(null);
        assertThat(store.read(g)).isEmpty();
    }

    @Test
    void aConfigMapLeftByAnEarlierGroupOfTheSameNameIsNotThisGroupsStatus() {
        ConfigMap earlier = withVersion(GroupStatusStore.configMap(group("workers", "uid-old"), status(), NS, JSON),
                "5");
        GroupStatusStore store = new GroupStatusStore(client, NS, true, g -> Optional.of(earlier));
        store.inNodeGroup(false);

        assertThat(store.read(group("workers", "uid-new"))).isEmpty();
        assertThat(store.read(group("workers", "uid-old"))).contains(status());
    }
}
