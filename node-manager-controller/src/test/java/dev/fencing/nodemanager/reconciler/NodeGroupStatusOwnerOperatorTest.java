package dev.fencing.nodemanager.reconciler;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.grpc.StreamLimits;
import dev.fencing.nodemanager.status.GroupStatusStore;
import dev.fencing.nodemanager.status.NodeGroupStatusTarget;
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.nodemanager.testing.NodeGroupCrds;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * NodeGroups whose status a platform owns (Deckhouse writes its own conditions there): the controller leaves a group
 * without fencing alone, and writes no group status at all where the CRD would prune what it writes; there it keeps
 * the status in a ConfigMap per group instead.
 */
@CrudMockClient
class NodeGroupStatusOwnerOperatorTest {

    private static final String NS = "fencing-system";
    // What the platform keeps in a NodeGroup's status: its own conditions, no observedGeneration, no reasons.
    private static final List<Condition> PLATFORM = List.of(
            new ConditionBuilder().withType("Ready").withStatus("True").withLastTransitionTime("2026-11-29T00:00:00Z")
                    .withMessage("").build(),
            new ConditionBuilder().withType("Updating").withStatus("False")
                    .withLastTransitionTime("2026-11-29T00:00:00Z").withMessage("").build());

    KubernetesMockServer server;
    KubernetesClient client;

    private NodeManager manager;

    @AfterEach
    void tearDown() {
        if (manager != null) {
            manager.close();
        }
    }

    private void start() throws Exception {
        manager = new NodeManager(client, ControllerConfig.forTests(NS), StreamLimits.DEFAULTS, WriteLimits.DEFAULTS,
                InstantSource.system(), new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).start();
    }

    private void platformWritesStatus(String group) {
        client.resources(NodeGroup.class).withName(group).editStatus(g -> {
            g.setStatus(new NodeGroupStatus().withConditions(PLATFORM));
            return g;
        });
    }

    private NodeGroupStatus status(String group) {
        return client.resources(NodeGroup.class).withName(group).get().getStatus();
    }

    private boolean daemonSet(String group) {
        return client.apps().daemonSets().inNamespace(NS).withName("fencing-agent-" + group).get() != null;
    }

    @Test
    void aGroupWithoutFencingKeepsThePlatformsStatusWhereTheControllerWritesStatus() throws Exception {
        OperatorFixtures.installNodeGroupCrd(client);
        start();
        client.resource(OperatorFixtures.watchdogGroup("workers")).create();
        client.nodes().resource(node("workers-1", "workers", 1)).create();
        NodeGroup plain = OperatorFixtures.watchdogGroup("plain");
        plain.getSpec().setFencing(null);
        client.resource(plain).create();
        platformWritesStatus("plain");
        client.nodes().resource(node("plain-1", "plain", 1)).create();

        // The controller writes status where it fences (so it does reconcile, every 2 s here)...
        await().atMost(10, TimeUnit.SECONDS).until(() -> status("workers") != null
                && status("workers").getObservedGeneration() != null);
        assertThat(manager.groupView("workers").orElseThrow().status().getObservedGeneration()).isNotNull();
        // ...and leaves the platform's conditions of a group without fencing as they are, as before for no status.
        await().during(Duration.ofSeconds(5)).atMost(8, TimeUnit.SECONDS).until(() -> PLATFORM.equals(
                status("plain").getConditions()) && status("plain").getObservedGeneration() == null);
        assertThat(daemonSet("plain")).isFalse();
    }

    @Test
    void whereTheCrdWouldPruneTheStatusNoGroupGetsAStatusWriteAndDaemonSetsStillFollowTheSpec() throws Exception {
        client.apiextensions().v1().customResourceDefinitions()
                .resource(NodeGroupCrds.platformDefined(client)).create();
        assertThat(NodeGroupStatusTarget.decide(NodeGroupStatusTarget.Mode.AUTO, client).write()).isFalse();
        start();
        client.resource(OperatorFixtures.watchdogGroup("workers")).create();
        platformWritesStatus("workers");
        // Reported NotReady by their kubelets (a Node no kubelet reported yet does not count for the storm limits).
        for (int i = 1; i <= 2; i++) {
            client.nodes().resource(new io.fabric8.kubernetes.api.model.NodeBuilder(node("workers-" + i, "workers", i))
                    .editStatus().addNewCondition().withType("Ready").withStatus("False").endCondition().endStatus()
                    .build()).create();
        }

        await().atMost(10, TimeUnit.SECONDS).until(() -> daemonSet("workers"));
        // Reconciles go on (Events about the group, e.g. the storm limit with no healthy node), the status does not.
        await().atMost(10, TimeUnit.SECONDS).until(() -> client.v1().events().inNamespace("default").list()
                .getItems().stream().map(Event::getInvolvedObject).anyMatch(o -> "workers".equals(o.getName())));
        await().during(Duration.ofSeconds(5)).atMost(8, TimeUnit.SECONDS).until(() -> PLATFORM.equals(
                status("workers").getConditions()) && status("workers").getObservedGeneration() == null);
        // The status is computed all the same: the group view (kubectl fencing view) carries it...
        NodeGroupStatus computed = manager.groupView("workers").orElseThrow().status();
        assertThat(computed.getExpected()).isEqualTo(2);
        assertThat(computed.getTimings().getTStop()).isNotBlank();
        assertThat(computed.getConditions()).extracting(Condition::getType).contains("Ready", "QuorumHealthy");
        // ...and it is kept for the next leader in the group's ConfigMap, which every replica watches.
        await().atMost(10, TimeUnit.SECONDS).until(() -> computed.equals(kept("workers")));

        // Fencing switched off: the agent DaemonSet goes, the status stays the platform's; the kept one says so.
        client.resources(NodeGroup.class).withName("workers").patch(PatchContext.of(PatchType.JSON),
                "[{\"op\":\"remove\",\"path\":\"/spec/fencing\"}]");
        await().atMost(10, TimeUnit.SECONDS).until(() -> !daemonSet("workers"));
        assertThat(status("workers").getConditions()).isEqualTo(PLATFORM);
        assertThat(status("workers").getExpected()).isNull();
        await().atMost(10, TimeUnit.SECONDS).until(() -> kept("workers").getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "FencingDisabled".equals(c.getReason())));
        // A group that never had fencing gets no ConfigMap.
        NodeGroup plain = OperatorFixtures.watchdogGroup("plain");
        plain.getSpec().setFencing(null);
        client.resource(plain).create();
        client.nodes().resource(node("plain-1", "plain", 3)).create();

        // The group deleted: the leader deletes its ConfigMap (the garbage collector would too).
        client.resources(NodeGroup.class).withName("workers").delete();
        await().atMost(10, TimeUnit.SECONDS).until(() -> statusConfigMap("workers") == null);
        assertThat(statusConfigMap("plain")).isNull();
    }

    private ConfigMap statusConfigMap(String group) {
        return client.configMaps().inNamespace(NS).withName(GroupStatusStore.name(group)).get();
    }

    private NodeGroupStatus kept(String group) {
        ConfigMap cm = statusConfigMap(group);
        return cm == null ? null : GroupStatusStore.parse(cm, client.getKubernetesSerialization());
    }
}
