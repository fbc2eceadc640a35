package dev.fencing.nodemanager.storm;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.FencingWatchdog;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.cache.ClusterCache;
import dev.fencing.nodemanager.cache.NodeLeases;
import dev.fencing.nodemanager.status.GroupStatusStore;
import dev.fencing.nodemanager.status.NodeFacts;
import dev.fencing.nodemanager.stream.ConfigDistributor;
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.nodemanager.testing.NodeGroupCrds;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The storm census as the controller builds it, from a real {@link ClusterCache} on the CRUD mock: what it lists is
 * what {@code --storm-max-concurrent} and the cluster {@code minHealthy} count.
 */
@CrudMockClient
class CachedStormCensusCrudMockTest {

    private static final Instant T0 = Instant.parse("2026-11-23T10:00:00Z");

    KubernetesClient client;
    private ClusterCache cache;

    @AfterEach
    void tearDown() {
        if (cache != null) {
            cache.close();
        }
    }

    private void group(String name, String watchdogTimeout) {
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName(name).build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing().withMode("Watchdog")
                .withQuorumLossAction("Fence").withWatchdog(new FencingWatchdog().withTimeout(watchdogTimeout))));
        client.resource(g).create();
    }

    private void addNode(String name, String group, int ip, boolean ready, boolean taintedByUs) {
        NodeBuilder b = new NodeBuilder(node(name, group, ip)).editStatus().addNewCondition().withType("Ready")
                .withStatus(ready ? "True" : "False").endCondition().endStatus();
        if (taintedByUs) {
            b.editMetadata().addToAnnotations(NodeFacts.TAINTED_BY_ANNOTATION, NodeFacts.TAINTED_BY).endMetadata()
                    .editOrNewSpec().addNewTaint().withKey(NodeFacts.OUT_OF_SERVICE_TAINT)
                    .withValue(NodeFacts.OUT_OF_SERVICE_VALUE).withEffect(NodeFacts.OUT_OF_SERVICE_EFFECT)
                    .endTaint().endSpec();
        }
        client.nodes().resource(b.build()).create();
    }

    /**
     * Group a has two fencings in progress (its nodes tainted) when someone saves an invalid edit of its spec; the
     * taints stay. With the cluster-wide cap at 2, group b may not start a third.
     */
    @Test
    void fencingsInProgressInAGroupWhoseSpecIsInvalidStillCountAgainstTheClusterMaximum() {
        NodeGroupCrds.install(client);
        group("a", "1s");
        group("b", "60s");
        addNode("a-1", "a", 1, false, true);
        addNode("a-2", "a", 2, false, true);
        addNode("a-3", "a", 3, true, false);
        addNode("a-4", "a", 4, true, false);
        addNode("b-1", "b", 11, false, false);
        addNode("b-2", "b", 12, true, false);
        addNode("b-3", "b", 13, true, false);
        addNode("b-4", "b", 14, true, false);
        cache = new ClusterCache(client, 7946, new ConfigDistributor("e", 100), "ns", false,
                new NodeLeases(InstantSource.fixed(T0)));
        cache.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> cache.models().keySet().containsAll(Set.of("a", "b")));
        assertThat(cache.models().get("a").valid()).as("a watchdog timeout of 1s is invalid").isFalse();
        CachedStormCensus census = new CachedStormCensus(cache, new GroupStatusStore(client, "ns", true,
                g -> Optional.empty()));

        assertThat(census.groups()).containsKeys("a", "b");
        assertThat(census.groups().get("a").fencing()).containsExactly("a-1", "a-2");
        StormGuard.Decision d = new StormGuard(ClusterStormLimits.DEFAULTS, census).decide("b", "b-1", T0);
        assertThat(d.limit()).isEqualTo(StormLimit.CLUSTER_MAX_CONCURRENT);
        assertThat(d.message()).contains("a/a-1", "a/a-2");
    }
}
