package dev.fencing.nodemanager.realapi;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.FencingWatchdog;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.api.v1.NodeType;
import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.config.ControllerConfig;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The real operator ({@link NodeManager}) against a real kube-apiserver writes NodeGroup status through the status
 * subresource, in both write modes: server-side apply (production) and the JSON patch the CRUD mock needs. The
 * server, not the test, enforces the subresource split: a write of the main resource cannot change status, a status
 * write cannot change the spec, only spec changes move {@code metadata.generation}, and the controller reports the
 * generation it computed from in {@code status.observedGeneration}.
 */
class NodeGroupStatusRealApiTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.apiServerOnly();

    /** JOSDK's field manager for the primary resource: the controller's name. */
    private static final String STATUS_MANAGER = "nodegroup-status-controller";
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static KubernetesClient admin;

    @BeforeAll
    static void installCrd() {
        admin = KUBE.get().adminClient();
        RealApiNodeGroups.installCrd(admin);
    }

    private static NodeGroup watchdogGroup(String name, String timeout) {
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName(name).build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing().withMode("Watchdog")
                .withWatchdog(new FencingWatchdog().withTimeout(timeout))));
        return g;
    }

    private static NodeGroup get(String name) {
        return admin.resources(NodeGroup.class).withName(name).get();
    }

    @ParameterizedTest(name = "serverSideApply={0}")
    @ValueSource(booleans = {true, false})
    void statusIsWrittenThroughTheSubresourceAndFollowsTheGeneration(boolean serverSideApply) throws Exception {
        String ns = RealApiNodeGroups.namespace(admin, KUBE.get().uniqueName("status"));
        String group = KUBE.get().uniqueName("g");
        ControllerConfig config = ControllerConfig.forTests(ns).withServerSideApply(serverSideApply);
        try (NodeManager manager = new NodeManager(admin, config, InstantSource.system(),
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).start()) {
            admin.resource(watchdogGroup(group, "60s")).create();
            for (int i = 1; i <= 3; i++) {
                admin.nodes().resource(node(group + "-" + i, group, i)).create();
            }

            NodeGroup first = await().atMost(WAIT).until(() -> get(group), g -> g.getStatus() != null
                    && Long.valueOf(1).equals(g.getStatus().getObservedGeneration())
                    && Integer.valueOf(3).equals(g.getStatus().getExpected()));
            assertThat(first.getMetadata().getGeneration()).isEqualTo(1L);
            assertThat(first.getStatus().getMode()).isEqualTo("Watchdog");
            assertThat(first.getStatus().getTimings().getWatchdogTimeout()).isEqualTo("1m");
            assertThat(first.getStatus().getConditions()).extracting(c -> c.getType()).contains("Ready");
            ManagedFieldsEntry statusEntry = first.getMetadata().getManagedFields().stream()
                    .filter(m -> "status".equals(m.getSubresource())).filter(m -> serverSideApply
                            ? STATUS_MANAGER.equals(m.getManager()) : "Update".equals(m.getOperation()))
                    .findFirst().orElseThrow(() -> new AssertionError("no status field manager in "
                            + first.getMetadata().getManagedFields()));
            assertThat(statusEntry.getOperation()).isEqualTo(serverSideApply ? "Apply" : "Update");

            if (serverSideApply) {
                // The server knows the controller owns status.expected: another applier must force to take it.
                GenericKubernetesResource theirs = admin.getKubernetesSerialization().unmarshal("apiVersion: "
                        + "deckhouse.io/v1\nkind: NodeGroup\nmetadata: {name: " + group + "}\nstatus: {expected: 5}\n",
                        GenericKubernetesResource.class);
                assertThatThrownBy(() -> admin.genericKubernetesResources("deckhouse.io/v1", "NodeGroup")
                        .resource(theirs).subresource("status").patch(new PatchContext.Builder()
                                .withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager("other-writer")
                                .withForce(false).build()))
                        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                            assertThat(e.getCode()).isEqualTo(409);
                            assertThat(e.getMessage()).contains("conflict with \"" + STATUS_MANAGER + "\"")
                                    .contains(".status.expected");
                        });
            }

            // A write of the main resource carrying a status: the spec change lands, the status part is dropped.
            NodeGroup afterSpecWrite = admin.resources(NodeGroup.class).withName(group).edit(g -> {
                g.getSpec().getFencing().getWatchdog().setTimeout("30s");
                g.setStatus(new NodeGroupStatus().withExpected(42).withMode("Notify"));
                return g;
            });
            assertThat(afterSpecWrite.getMetadata().getGeneration()).isEqualTo(2L);
            assertThat(afterSpecWrite.getStatus().getExpected()).isEqualTo(3);
            assertThat(afterSpecWrite.getStatus().getMode()).isEqualTo("Watchdog");

            NodeGroup second = await().atMost(WAIT).until(() -> get(group), g -> Long.valueOf(2)
                    .equals(g.getStatus().getObservedGeneration()));
            assertThat(second.getStatus().getTimings().getWatchdogTimeout()).isEqualTo("30s");

            // Another writer of the status subresource: its spec part is dropped, the generation stays, and the
            // controller puts its own value back.
            GenericKubernetesResource afterStatusWrite = admin.genericKubernetesResources("deckhouse.io/v1",
                    "NodeGroup").withName(group).editStatus(ng -> {
                        Map<String, Object> status = ng.get("status");
                        status.put("expected", 7);
                        Map<String, Object> fencing = ng.get("spec", "fencing");
                        fencing.put("mode", "Notify");
                        return ng;
                    });
            assertThat(afterStatusWrite.getMetadata().getGeneration()).isEqualTo(2L);
            assertThat((Map<String, Object>) afterStatusWrite.get("spec", "fencing")).containsEntry("mode",
                    "Watchdog");
            assertThat((Object) afterStatusWrite.get("status", "expected")).isEqualTo(7);

            await().atMost(WAIT).until(() -> get(group).getStatus().getExpected(), e -> e == 3);
            assertThat(get(group).getMetadata().getGeneration()).isEqualTo(2L);

            // A JSON patch of the main resource that only touches status is a no-op for status too.
            admin.resources(NodeGroup.class).withName(group).patch(PatchContext.of(PatchType.JSON),
                    "[{\"op\":\"replace\",\"path\":\"/status/expected\",\"value\":99}]");
            assertThat(get(group).getStatus().getExpected()).isEqualTo(3);

            admin.resources(NodeGroup.class).withName(group).delete();
            for (int i = 1; i <= 3; i++) {
                admin.nodes().withName(group + "-" + i).delete();
            }
        }
    }
}
