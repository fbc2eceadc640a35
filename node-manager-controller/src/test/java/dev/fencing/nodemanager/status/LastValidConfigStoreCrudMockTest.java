package dev.fencing.nodemanager.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.PolicyProtos;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.proto.nodemanager.v1.GossipKeyring;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import dev.fencing.proto.nodemanager.v1.Member;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.io.ByteArrayOutputStream;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The ConfigMap that keeps the policy and members a group's agents are served, for a controller that starts while
 * the spec is invalid: written on a change (the generation at once, members at most once per interval), read back
 * only for the NodeGroup that owns it, at the generation it was written at, and only when agents would accept what
 * it holds (never a key); a refused write leaves no older content behind.
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

    private static NodeGroup group(String uid, long generation) {
        NodeGroup group = new NodeGroup();
        group.setMetadata(new ObjectMetaBuilder().withName("workers").withUid(uid).withGeneration(generation)
                .build());
        return group;
    }

    private static Member member(int i) {
        String ip = "198.18.0." + i;
        return Member.newBuilder().setName("w-" + i).setGossipAddress(ip + ":9651")
                .putAddresses("InternalIP", ip).putAddresses("Hostname", "w-" + i).build();
    }

    /** What a controller serves a group of {@code n} with the default spec. */
    private static GroupConfig served(int n) {
        GroupConfig.Builder b = GroupConfig.newBuilder().setGroup("workers")
                .setPolicy(PolicyProtos.toProto(PolicyResolver.resolve(FencingSpec.DEFAULTS, n)));
        for (int i = 1; i <= n; i++) {
            b.addMembers(member(i));
        }
        return b.build();
    }

    private ConfigMap stored() {
        return client.configMaps().inNamespace(NS).withName(LastValidConfigStore.name("workers")).get();
    }

    private void advance(long nanos) {
        now.addAndGet(nanos);
    }

    @Test
    void whatIsKeptIsReadBackForItsOwnerAtItsGenerationAndWrittenOncePerChange() {
        LastValidConfigStore store = store();
        GroupConfig config = served(3);
        // What the distributor hands over names a node and carries keys: the store keeps neither.
        GroupConfig withKeys = config.toBuilder().setNodeName("w-1")
                .setKeyring(GossipKeyring.newBuilder().setPrimary(ByteString.copyFrom(new byte[16]))).build();
        assertThat(store.keep(group("uid-1", 7), withKeys, 7, false)).isTrue();

        ConfigMap cm = stored();
        assertThat(cm.getMetadata().getLabels()).containsEntry(LastValidConfigStore.GROUP_LABEL, "workers");
        assertThat(GroupStatusStore.ownerUid(cm)).isEqualTo("uid-1");
        assertThat(cm.getData()).containsEntry(LastValidConfigStore.GENERATION_KEY, "7")
                .containsEntry(LastValidConfigStore.SUMMARY_KEY,
                        "3 members, quorum size 2, mode FENCING_MODE_WATCHDOG, served at NodeGroup generation 7");
        assertThat(store.read("workers", "uid-1", 7)).contains(config);
        assertThat(store.read("workers", "uid-2", 7)).as("another NodeGroup of this name").isEmpty();
        assertThat(store.read("workers", "uid-1", 8)).as("the spec changed since it was written").isEmpty();

        String version = cm.getMetadata().getResourceVersion();
        advance(LastValidConfigStore.MIN_WRITE_INTERVAL_NANOS);
        assertThat(store.keep(group("uid-1", 7), config, 7, false)).isTrue();
        assertThat(stored().getMetadata().getResourceVersion()).as("unchanged: not written").isEqualTo(version);

        // The spec turned invalid (generation 8): the same pair is stamped again at once.
        assertThat(store.keep(group("uid-1", 8), config, 8, true)).isTrue();
        assertThat(store.read("workers", "uid-1", 8)).contains(config);

        // A member change within the interval waits; the next call after it writes the latest.
        GroupConfig grown = served(4);
        assertThat(store.keep(group("uid-1", 8), grown, 8, false)).isFalse();
        assertThat(store.read("workers", "uid-1", 8)).contains(config);
        advance(LastValidConfigStore.MIN_WRITE_INTERVAL_NANOS);
        assertThat(store.keep(group("uid-1", 8), grown, 8, false)).isTrue();
        assertThat(store.read("workers", "uid-1", 8)).contains(grown);

        // A group with no members left is kept as it is served (quorum 1 of 0), not written again and again.
        advance(LastValidConfigStore.MIN_WRITE_INTERVAL_NANOS);
        assertThat(store.keep(group("uid-1", 8), served(0), 8, false)).isTrue();
        String emptyVersion = stored().getMetadata().getResourceVersion();
        advance(LastValidConfigStore.MIN_WRITE_INTERVAL_NANOS);
        assertThat(store.keep(group("uid-1", 8), served(0), 8, false)).isTrue();
        assertThat(stored().getMetadata().getResourceVersion()).isEqualTo(emptyVersion);

        store.delete("workers", "uid-2");
        assertThat(stored()).as("not deleted for another owner").isNotNull();
        store.delete("workers", "uid-1");
        assertThat(stored()).isNull();
        assertThat(store.read("workers", "uid-1", 8)).isEmpty();
    }

    @Test
    void aConfigMapWhoseContentAgentsWouldRefuseIsIgnored() {
        LastValidConfigStore store = store();
        store.keep(group("uid-1", 1), served(3), 1, false);
        ConfigMap good = stored();
        Map<String, GroupConfig> bad = new LinkedHashMap<>();
        bad.put("a key", served(3).toBuilder().setKeyring(GossipKeyring.newBuilder()
                .setPrimary(ByteString.copyFrom(new byte[16]))).build());
        bad.put("quorum 1 of 3, no majority", served(3).toBuilder()
                .setPolicy(served(3).getPolicy().toBuilder().setQuorumSize(1)).build());
        bad.put("quorum above members", served(3).toBuilder()
                .setPolicy(served(3).getPolicy().toBuilder().setQuorumSize(4)).build());
        bad.put("no timings", served(3).toBuilder()
                .setPolicy(served(3).getPolicy().toBuilder().clearTimings()).build());
        bad.put("another group", served(3).toBuilder().setGroup("other").build());
        bad.put("no policy", served(3).toBuilder().clearPolicy().build());
        bad.put("a member twice", served(3).toBuilder().setMembers(2, member(1)).build());
        bad.put("a member without address", served(3).toBuilder()
                .setMembers(2, Member.newBuilder().setName("w-3")).build());
        bad.put("a gossip address that is a name", served(3).toBuilder()
                .setMembers(2, member(3).toBuilder().setGossipAddress("w-3.example:9651")).build());
        bad.put("a network address that is a name", served(3).toBuilder()
                .setMembers(2, member(3).toBuilder().putGossipAddresses("198.18.0.0/24", "cafe:9651")).build());
        for (Map.Entry<String, GroupConfig> e : bad.entrySet()) {
            replace(good, Base64.getEncoder().encodeToString(e.getValue().toByteArray()), "1");
            assertThat(store.read("workers", "uid-1", 1)).as(e.getKey()).isEmpty();
        }
        replace(good, "not base64!", "1");
        assertThat(store.read("workers", "uid-1", 1)).isEmpty();
        replace(good, Base64.getEncoder().encodeToString(new byte[] {(byte) 0xff, 0x01, 0x02}), "1");
        assertThat(store.read("workers", "uid-1", 1)).isEmpty();
        replace(good, Base64.getEncoder().encodeToString(served(3).toByteArray()), "one");
        assertThat(store.read("workers", "uid-1", 1)).as("no generation").isEmpty();

        // Fields this version does not know are dropped, not forwarded to agents.
        replace(good, Base64.getEncoder().encodeToString(withUnknownField(served(3))), "1");
        assertThat(store.read("workers", "uid-1", 1)).contains(served(3));

        // The leader writes over a bad one (once its own last write is an interval old).
        replace(good, "not base64!", "1");
        advance(LastValidConfigStore.MIN_WRITE_INTERVAL_NANOS);
        assertThat(store.keep(group("uid-1", 1), served(3), 1, false)).isTrue();
        assertThat(store.read("workers", "uid-1", 1)).contains(served(3));
    }

    /**
     * Validity can change without the generation (an explicit quorum size against a changed member count): a pair
     * newly frozen at the same generation is written at once, since a replica starting now must serve it; a refused
     * write counts against the write interval, so a ConfigMap the API server keeps refusing is not sent at every
     * reconcile.
     */
    @Test
    void aNewlyFrozenPairIsWrittenAtOnceAndRefusedWritesCountAgainstTheInterval() {
        LastValidConfigStore store = store();
        assertThat(store.keep(group("uid-1", 5), served(3), 5, false)).isTrue();
        assertThat(store.keep(group("uid-1", 5), served(4), 5, false)).as("within the interval").isFalse();
        assertThat(store.keep(group("uid-1", 5), served(4), 5, true)).as("frozen: at once").isTrue();
        assertThat(store.read("workers", "uid-1", 5)).contains(served(4));

        advance(LastValidConfigStore.MIN_WRITE_INTERVAL_NANOS);
        refuseNextUpdate(413, "RequestEntityTooLarge");
        assertThat(store.keep(group("uid-1", 5), served(5), 5, false)).isFalse();
        assertThat(stored()).as("the older pair is gone").isNull();
        // Other content within the interval of the refused attempt: not sent.
        advance(LastValidConfigStore.MIN_WRITE_INTERVAL_NANOS / 2);
        assertThat(store.keep(group("uid-1", 5), served(6), 5, false)).isFalse();
        assertThat(stored()).isNull();
        advance(LastValidConfigStore.MIN_WRITE_INTERVAL_NANOS / 2);
        assertThat(store.keep(group("uid-1", 5), served(6), 5, false)).isTrue();
        assertThat(store.read("workers", "uid-1", 5)).contains(served(6));
    }

    /** What this store would not read back is not written, and the older content goes: nothing stale is served. */
    @Test
    void servedContentThisStoreCannotReadBackIsNotWrittenAndTheOlderContentIsDeleted() {
        LastValidConfigStore store = store();
        assertThat(store.keep(group("uid-1", 2), served(3), 2, false)).isTrue();
        GroupConfig zoned = served(3).toBuilder()
                .setMembers(2, member(3).toBuilder().setGossipAddress("[fe80::1%eth0]:9651")).build();
        assertThat(store.keep(group("uid-1", 3), zoned, 3, true)).isFalse();
        assertThat(stored()).isNull();
        assertThat(store.read("workers", "uid-1", 3)).isEmpty();
    }

    @Test
    void moreMembersThanAnyGroupHasAreNotRead() {
        GroupConfig.Builder huge = GroupConfig.newBuilder().setGroup("workers")
                .setPolicy(PolicyProtos.toProto(PolicyResolver.resolve(FencingSpec.DEFAULTS,
                        LastValidConfigStore.MAX_MEMBERS + 1)));
        for (int i = 0; i <= LastValidConfigStore.MAX_MEMBERS; i++) {
            huge.addMembers(Member.newBuilder().setName("n-" + i).setGossipAddress("198.18.1.1:" + (1000 + i)));
        }
        ConfigMap cm = LastValidConfigStore.configMap(group("uid-1", 1), huge.build(), 1, NS);
        assertThatThrownBy(() -> LastValidConfigStore.parse(cm, "workers"))
                .hasMessageContaining("more than " + LastValidConfigStore.MAX_MEMBERS);
    }

    @Test
    void gossipAddressesAreIpLiteralsWithAPort() {
        assertThat(LastValidConfigStore.ipPort("198.18.0.1:9651")).isTrue();
        assertThat(LastValidConfigStore.ipPort("[2001:db8::1]:9651")).isTrue();
        assertThat(LastValidConfigStore.ipPort("2001:db8::1:9651")).as("IPv6 without brackets").isFalse();
        assertThat(LastValidConfigStore.ipPort("node-1:9651")).isFalse();
        assertThat(LastValidConfigStore.ipPort("cafe:9651")).as("a name of hex digits").isFalse();
        assertThat(LastValidConfigStore.ipPort("198.18.0.1")).isFalse();
        assertThat(LastValidConfigStore.ipPort("198.18.0.1:0")).isFalse();
        assertThat(LastValidConfigStore.ipPort("198.18.0.1:65536")).isFalse();
        assertThat(LastValidConfigStore.ipPort("198.18.0.300:9651")).isFalse();
        assertThat(LastValidConfigStore.ipPort(":9651")).isFalse();
    }

    /**
     * A refused write (too large for the API server, a webhook) deletes the older content, so no replica serves
     * what is no longer served, and the same content is tried again only after the retry interval.
     */
    @Test
    void aRefusedWriteLeavesNoOlderContentAndIsTriedAgainAfterTheRetryInterval() {
        LastValidConfigStore store = store();
        assertThat(store.keep(group("uid-1", 1), served(3), 1, false)).isTrue();
        advance(LastValidConfigStore.MIN_WRITE_INTERVAL_NANOS);

        refuseNextUpdate(422, "Invalid");
        assertThat(store.keep(group("uid-1", 1), served(4), 1, false)).isFalse();
        assertThat(stored()).as("the older pair is gone").isNull();

        advance(LastValidConfigStore.RETRY_NANOS / 2);
        assertThat(store.keep(group("uid-1", 1), served(4), 1, false)).as("not tried again yet").isFalse();
        assertThat(stored()).isNull();
        advance(LastValidConfigStore.RETRY_NANOS / 2);
        assertThat(store.keep(group("uid-1", 1), served(4), 1, false)).isTrue();
        assertThat(store.read("workers", "uid-1", 1)).contains(served(4));
    }

    // The next create-or-update of the ConfigMap: the create finds it exists, the update is refused with code.
    private void refuseNextUpdate(int code, String reason) {
        server.expect().post().withPath("/api/v1/namespaces/" + NS + "/configmaps")
                .andReturn(409, new StatusBuilder().withStatus("Failure").withCode(409).withReason("AlreadyExists")
                        .build())
                .once();
        server.expect().put().withPath("/api/v1/namespaces/" + NS + "/configmaps/fencing-config-workers")
                .andReturn(code, new StatusBuilder().withStatus("Failure").withCode(code).withReason(reason)
                        .withMessage("ConfigMap \"fencing-config-workers\" is refused").build())
                .once();
    }

    private void replace(ConfigMap template, String base64, String generation) {
        ConfigMap edited = new ConfigMapBuilder(template).editMetadata().withResourceVersion(null).endMetadata()
                .withData(Map.of(LastValidConfigStore.GENERATION_KEY, generation))
                .withBinaryData(Map.of(LastValidConfigStore.DATA_KEY, base64)).build();
        client.configMaps().inNamespace(NS).resource(edited).update();
    }

    // The config's bytes with a field number no GroupConfig has (99, varint 1) appended.
    private static byte[] withUnknownField(GroupConfig config) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(config.toByteArray());
        out.write((99 << 3) & 0x7f | 0x80);
        out.write((99 << 3) >>> 7);
        out.write(1);
        return out.toByteArray();
    }
}
