package dev.fencing.nodemanager.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.nodemanager.testing.CrudMockClient;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The leader's writes of a status ConfigMap (create-or-update, as on the CRUD mock): one write per change while the
 * cache may lag, and a ConfigMap deleted behind the leader's back is written again once that lag has passed.
 */
@CrudMockClient
class GroupStatusStoreCrudMockTest {

    private static final String NS = "fencing-system";
    private static final long SECOND = 1_000_000_000L;

    KubernetesClient client;

    @Test
    void aDeletedConfigMapIsWrittenAgainOnceTheCacheCouldShowTheFirstWrite() {
        AtomicLong now = new AtomicLong(100 * SECOND);
        String name = GroupStatusStore.name("workers");
        GroupStatusStore store = new GroupStatusStore(client, NS, false, g -> Optional.ofNullable(
                client.configMaps().inNamespace(NS).withName(GroupStatusStore.name(g)).get()), now::get);
        store.inNodeGroup(false);
        NodeGroup group = new NodeGroup();
        group.setMetadata(new ObjectMetaBuilder().withName("workers").withUid("uid-1").build());
        NodeGroupStatus status = new NodeGroupStatus().withObservedGeneration(1L).withExpected(3);

        assertThat(store.keep(group, status)).isTrue();
        assertThat(store.read(group)).contains(status);

        client.configMaps().inNamespace(NS).withName(name).delete();
        now.addAndGet(SECOND);
        // Within the cache's lag the same status is not written twice...
        assertThat(store.keep(group, status)).isTrue();
        assertThat(client.configMaps().inNamespace(NS).withName(name).get()).isNull();
        // ...but a new one is, at once.
        NodeGroupStatus changed = new NodeGroupStatus().withObservedGeneration(1L).withExpected(4);
        assertThat(store.keep(group, changed)).isTrue();
        assertThat(store.read(group)).contains(changed);

        client.configMaps().inNamespace(NS).withName(name).delete();
        now.addAndGet(GroupStatusStore.CACHE_LAG_NANOS);
        assertThat(store.keep(group, changed)).isTrue();
        assertThat(store.read(group)).contains(changed);
    }
}
