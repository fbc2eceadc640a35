package dev.fencing.nodemanager.status;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.nodemanager.v1.FencingPolicy;
import dev.fencing.proto.nodemanager.v1.GossipKeyring;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import dev.fencing.proto.nodemanager.v1.Member;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The ConfigMap that keeps the policy and members a group's agents are served, for a controller that starts while
 * the spec is invalid: written once per change, read back only for the NodeGroup that owns it and only when a
 * controller would serve what it holds (never a key), deleted only for its owner.
 */
@CrudMockClient
class LastValidConfigStoreCrudMockTest {

    private static final String NS = "fencing-system";

    KubernetesMockServer server;
    KubernetesClient client;

    private final AtomicLong now = new AtomicLong(1_000_000_000_000L);

    private LastValidConfigStore store() {
        return new LastValidConfigStore(client, NS, false, g -> Optional.ofNullable(
                client.configMaps().inNamespace(NS).withName(LastValidConfigStore.name(g)).get()), now::get);
    }

    private static NodeGroup group(String uid) {
        NodeGroup group = new NodeGroup();
        group.setMetadata(new ObjectMetaBuilder().withName("workers").withUid(uid).withGeneration(7L).build());
        return group;
    }

    private static Member member(String name, String ip) {
        return Member.newBuilder().setName(name).setGossipAddress(ip + ":9651")
                .putAddresses("InternalIP", ip).putAddresses("Hostname", name).build();
    }

    private static GroupConfig served(int quorum) {
        return GroupConfig.newBuilder().setGroup("workers")
                .setPolicy(FencingPolicy.newBuilder().setMode(FencingMode.FENCING_MODE_WATCHDOG).setQuorumSize(quorum))
                .addMembers(member("w-1", "198.18.0.1")).addMembers(member("w-2", "198.18.0.2"))
                .addMembers(member("w-3", "198.18.0.3")).build();
    }

    private ConfigMap stored() {
        return client.configMaps().inNamespace(NS).withName(LastValidConfigStore.name("workers")).get();
    }

    @Test
    void whatIsKeptIsReadBackForItsOwnerOnlyAndWrittenOncePerChange() {
        LastValidConfigStore store = store();
        GroupConfig config = served(2);
        // What the distributor hands over may name a node and carry keys: the store keeps neither.
        GroupConfig withKeys = config.toBuilder().setNodeName("w-1")
                .setKeyring(GossipKeyring.newBuilder().setPrimary(ByteString.copyFrom(new byte[16]))).build();
        assertThat(store.keep(group("uid-1"), withKeys)).isTrue();

        ConfigMap cm = stored();
        assertThat(cm.getMetadata().getLabels()).containsEntry(LastValidConfigStore.GROUP_LABEL, "workers");
        assertThat(GroupStatusStore.ownerUid(cm)).isEqualTo("uid-1");
        assertThat(cm.getData().get(LastValidConfigStore.SUMMARY_KEY))
                .isEqualTo("3 members, quorum size 2, mode FENCING_MODE_WATCHDOG, NodeGroup generation 7 or earlier");
        assertThat(store.read("workers", "uid-1")).contains(config);
        assertThat(store.read("workers", "uid-2")).as("another NodeGroup of this name").isEmpty();

        String version = cm.getMetadata().getResourceVersion();
        now.addAndGet(LastValidConfigStore.CACHE_LAG_NANOS * 2);
        assertThat(store.keep(group("uid-1"), config)).isTrue();
        assertThat(stored().getMetadata().getResourceVersion()).as("unchanged: not written").isEqualTo(version);

        GroupConfig grown = served(3).toBuilder().addMembers(member("w-4", "198.18.0.4")).build();
        assertThat(store.keep(group("uid-1"), grown)).isTrue();
        assertThat(store.read("workers", "uid-1")).contains(grown);

        store.delete("workers", "uid-2");
        assertThat(stored()).as("not deleted for another owner").isNotNull();
        store.delete("workers", "uid-1");
        assertThat(stored()).isNull();
        assertThat(store.read("workers", "uid-1")).isEmpty();
    }

    @Test
    void aConfigMapNoControllerWouldServeIsIgnored() {
        LastValidConfigStore store = store();
        store.keep(group("uid-1"), served(2));
        ConfigMap good = stored();
        Map<String, GroupConfig> bad = Map.of(
                "a key", served(2).toBuilder().setKeyring(GossipKeyring.newBuilder()
                        .setPrimary(ByteString.copyFrom(new byte[16]))).build(),
                "quorum above members", served(4),
                "quorum 0", served(0),
                "another group", served(2).toBuilder().setGroup("other").build(),
                "no policy", served(2).toBuilder().clearPolicy().build(),
                "a member twice", served(2).toBuilder().addMembers(member("w-1", "198.18.0.9")).build(),
                "a member without address", served(2).toBuilder().addMembers(Member.newBuilder().setName("w-9"))
                        .build());
        for (Map.Entry<String, GroupConfig> e : bad.entrySet()) {
            replaceData(good, Base64.getEncoder().encodeToString(e.getValue().toByteArray()));
            assertThat(store.read("workers", "uid-1")).as(e.getKey()).isEmpty();
        }
        replaceData(good, "not base64!");
        assertThat(store.read("workers", "uid-1")).isEmpty();
        replaceData(good, Base64.getEncoder().encodeToString(new byte[] {(byte) 0xff, 0x01, 0x02}));
        assertThat(store.read("workers", "uid-1")).isEmpty();

        // The leader writes over it once its own write could be in the cache (before that it trusts that write).
        now.addAndGet(LastValidConfigStore.CACHE_LAG_NANOS);
        assertThat(store.keep(group("uid-1"), served(2))).isTrue();
        assertThat(store.read("workers", "uid-1")).contains(served(2));
    }

    /**
     * A refused write (too large for the API server, a webhook) is not repeated at every reconcile: the same content
     * is tried again after {@link LastValidConfigStore#RETRY_NANOS}, other content at once.
     */
    @Test
    void aRefusedWriteOfTheSameContentIsTriedAgainOnlyAfterTheRetryInterval() {
        LastValidConfigStore store = store();
        server.expect().post().withPath("/api/v1/namespaces/" + NS + "/configmaps")
                .andReturn(422, new StatusBuilder().withStatus("Failure").withCode(422).withReason("Invalid")
                        .withMessage("ConfigMap \"fencing-config-workers\" is invalid: too long").build())
                .once();
        assertThat(store.keep(group("uid-1"), served(2))).isFalse();
        now.addAndGet(LastValidConfigStore.RETRY_NANOS / 2);
        assertThat(store.keep(group("uid-1"), served(2))).as("not tried again yet").isFalse();
        assertThat(stored()).isNull();
        now.addAndGet(LastValidConfigStore.RETRY_NANOS / 2);
        assertThat(store.keep(group("uid-1"), served(2))).isTrue();
        assertThat(store.read("workers", "uid-1")).contains(served(2));

        server.expect().put().withPath("/api/v1/namespaces/" + NS + "/configmaps/fencing-config-workers")
                .andReturn(422, new StatusBuilder().withStatus("Failure").withCode(422).withReason("Invalid")
                        .withMessage("too long").build())
                .once();
        server.expect().post().withPath("/api/v1/namespaces/" + NS + "/configmaps")
                .andReturn(409, new StatusBuilder().withStatus("Failure").withCode(409).withReason("AlreadyExists")
                        .build())
                .once();
        GroupConfig grown = served(3).toBuilder().addMembers(member("w-4", "198.18.0.4")).build();
        assertThat(store.keep(group("uid-1"), grown)).isFalse();
        GroupConfig other = served(3);
        assertThat(store.keep(group("uid-1"), other)).as("other content: at once").isTrue();
        assertThat(store.read("workers", "uid-1")).contains(other);
    }

    private void replaceData(ConfigMap template, String base64) {
        ConfigMap edited = new ConfigMapBuilder(template).editMetadata().withResourceVersion(null).endMetadata()
                .withBinaryData(Map.of(LastValidConfigStore.DATA_KEY, base64)).build();
        client.configMaps().inNamespace(NS).resource(edited).update();
    }
}
