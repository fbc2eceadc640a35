package dev.fencing.nodemanager.realapi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.fencing.v1alpha1.ExecutionPolicy;
import dev.fencing.api.fencing.v1alpha1.FenceMethod;
import dev.fencing.api.fencing.v1alpha1.FenceParameter;
import dev.fencing.api.fencing.v1alpha1.FenceStage;
import dev.fencing.api.fencing.v1alpha1.NodeFencing;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfig;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfigSpec;
import dev.fencing.api.fencing.v1alpha1.NodeFencingPhase;
import dev.fencing.api.fencing.v1alpha1.SecretKeyRef;
import dev.fencing.api.fencing.v1alpha1.SecretParameter;
import dev.fencing.api.fencing.v1alpha1.StageRun;
import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.escalation.EscalationTrigger;
import dev.fencing.nodemanager.escalation.FenceStageExecutor;
import dev.fencing.nodemanager.escalation.FencingAdmission;
import dev.fencing.nodemanager.escalation.KdumpSightings;
import dev.fencing.nodemanager.escalation.KubernetesSecretSource;
import dev.fencing.nodemanager.escalation.NodeFencingController;
import dev.fencing.nodemanager.escalation.ProcessFenceAgentRunner;
import dev.fencing.nodemanager.reconciler.ClusterWriter;
import dev.fencing.nodemanager.status.NodeFacts;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The escalation controller against a real kube-apiserver with the generated CRDs: every status it writes passes the
 * server's schema (enums, conditions, the status subresource), the optimistic-lock claims work, and the taint lands.
 */
class NodeFencingRealApiTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.apiServerOnly();

    @TempDir
    Path agents;

    private static void install(KubernetesClient admin, String crd) throws Exception {
        try (InputStream in = NodeFencingRealApiTest.class.getResourceAsStream("/META-INF/fabric8/" + crd
                + "-v1.yml")) {
            admin.apiextensions().v1().customResourceDefinitions().resource(admin.getKubernetesSerialization()
                    .unmarshal(in, CustomResourceDefinition.class)).fieldManager("node-fencing-real-api-test")
                    .forceConflicts().serverSideApply();
        }
        await().atMost(30, TimeUnit.SECONDS).until(() -> {
            CustomResourceDefinition got = admin.apiextensions().v1().customResourceDefinitions().withName(crd).get();
            return got != null && got.getStatus() != null && got.getStatus().getConditions().stream()
                    .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
        });
    }

    @Test
    void aFailingStageThenASucceedingOneAreRecordedAndTheNodeIsTainted() throws Exception {
        KubernetesClient admin = KUBE.get().adminClient();
        install(admin, NodeFencingConfig.CRD_NAME);
        install(admin, NodeFencing.CRD_NAME);
        // A fake agent: status says on until off was asked; exit 1 for the "broken" plug.
        Path agent = agents.resolve("fence_lab");
        Files.writeString(agent, """
                #!/bin/sh
                while IFS= read -r l; do case "$l" in action=*) a="${l#action=}";; plug=*) p="${l#plug=}";; esac; done
                [ "$p" = broken ] && { echo "Failed: no answer"; exit 1; }
                s="%s/$p.power"
                case "$a" in
                  status) [ -f "$s" ] && { echo "Status: OFF"; exit 2; }; echo "Status: ON"; exit 0;;
                  off) touch "$s"; echo "Success: Powered OFF"; exit 0;;
                esac
                exit 1
                """.formatted(agents));
        Files.setPosixFilePermissions(agent, PosixFilePermissions.fromString("rwxr-xr-x"));
        // A fully qualified name longer than a label value may be (63): the record's node label still validates.
        String node = KUBE.get().uniqueName("node") + ".rack-17.datacenter-west.example-corporation.internal.cluster";
        String ns = RealApiNodeGroups.namespace(admin, KUBE.get().uniqueName("fence"));
        admin.secrets().inNamespace(ns).resource(new SecretBuilder().withNewMetadata().withName("bmc")
                .withNamespace(ns).endMetadata().withStringData(Map.of("password", "pw")).build()).create();
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build()).create();
        NodeFencingConfig config = new NodeFencingConfig();
        config.setMetadata(new ObjectMetaBuilder().withName(KUBE.get().uniqueName("cfg")).build());
        SecretParameter password = new SecretParameter("password", new SecretKeyRef(ns, "bmc", "password"));
        config.setSpec(new NodeFencingConfigSpec(null, List.of(node), List.of(
                new FenceStage("bmc", ExecutionPolicy.One, false, "10s", List.of(new FenceMethod("ipmi", "fence_lab",
                        List.of(new FenceParameter("plug", "broken")), List.of(password)))),
                new FenceStage("pdu", null, null, null, List.of(new FenceMethod("outlet", "fence_lab",
                        List.of(new FenceParameter("plug", "$(NODE_NAME)")), List.of(password))))),
                null, "30s", null));
        admin.resources(NodeFencingConfig.class).resource(config).create();

        InstantSource clock = InstantSource.system();
        NodeFencingController.Sources sources = new NodeFencingController.Sources() {
            @Override
            public List<EscalationTrigger.Candidate> candidates() {
                Node n = admin.nodes().withName(node).get();
                return List.of(new EscalationTrigger.Candidate(n, "workers", Instant.now().minusSeconds(60), "ok", false,
                        false, NodeFacts.of(n, null)));
            }

            @Override
            public boolean returned(String name) {
                return false;
            }
        };
        try (NodeFencingController controller = new NodeFencingController(admin, new FenceStageExecutor(
                new ProcessFenceAgentRunner(agents), new KubernetesSecretSource(admin), clock, "replica-1"),
                new ClusterWriter(admin, clock), sources, new KdumpSightings(), FencingAdmission.UNLIMITED,
                () -> true, clock, "replica-1", Duration.ofSeconds(40), Duration.ofMillis(200), 1).start()) {
            await().atMost(60, TimeUnit.SECONDS).until(() -> admin.resources(NodeFencing.class).list().getItems()
                    .stream().anyMatch(r -> node.equals(r.getSpec().nodeName()) && r.getStatus() != null
                            && r.getStatus().taintedAt() != null));
        }
        NodeFencing record = admin.resources(NodeFencing.class).list().getItems().stream()
                .filter(r -> node.equals(r.getSpec().nodeName())).findFirst().orElseThrow();
        assertThat(record.getStatus().phase()).isEqualTo(NodeFencingPhase.Fenced);
        assertThat(node.length()).isGreaterThan(63);
        assertThat(admin.resources(NodeFencing.class).withLabel(NodeFencing.NODE_LABEL,
                NodeFencing.nodeLabelValue(node)).list().getItems()).singleElement()
                .satisfies(r -> assertThat(r.getSpec().nodeName()).isEqualTo(node));
        assertThat(record.getStatus().stages()).extracting(StageRun::name, StageRun::result).containsExactly(
                org.assertj.core.groups.Tuple.tuple("bmc", StageRun.FAILED),
                org.assertj.core.groups.Tuple.tuple("pdu", StageRun.SUCCEEDED));
        assertThat(record.getStatus().conditions()).anySatisfy(c -> {
            assertThat(c.getType()).isEqualTo("Fenced");
            assertThat(c.getStatus()).isEqualTo("True");
        });
        assertThat(NodeFacts.of(admin.nodes().withName(node).get(), null).outOfServiceByUs()).isTrue();
    }
}
