package dev.fencing.api.fencing.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.kubetest.RealControlPlaneExtension;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The generated NodeFencingConfig and NodeFencing CRDs on a real kube-apiserver: the example is accepted, and each
 * invalid config (one rule broken) is refused with HTTP 422 naming the field and the rule's message.
 */
class NodeFencingCrdRealApiTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.apiServerOnly();

    private static KubernetesClient admin;

    @BeforeAll
    static void installCrds() throws Exception {
        admin = KUBE.get().adminClient();
        for (String name : new String[] {NodeFencingConfig.CRD_NAME, NodeFencing.CRD_NAME}) {
            CustomResourceDefinition crd;
            try (InputStream in = NodeFencingCrdRealApiTest.class.getResourceAsStream(
                    "/META-INF/fabric8/" + name + "-v1.yml")) {
                crd = admin.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
            }
            admin.apiextensions().v1().customResourceDefinitions().resource(crd)
                    .fieldManager("nodefencing-crd-real-api-test").forceConflicts().serverSideApply();
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                CustomResourceDefinition got = admin.apiextensions().v1().customResourceDefinitions()
                        .withName(name).get();
                return got != null && got.getStatus() != null && got.getStatus().getConditions().stream()
                        .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
            });
        }
    }

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> resources(String kind) {
        return admin.genericKubernetesResources(NodeFencingConfig.GROUP + "/" + NodeFencingConfig.VERSION, kind);
    }

    private static GenericKubernetesResource object(String kind, String specYaml) {
        String yaml = "apiVersion: fencing.deckhouse.io/v1alpha1\nkind: " + kind + "\nmetadata:\n  name: "
                + KUBE.get().uniqueName("nf") + "\nspec:\n" + specYaml.stripIndent().indent(2);
        return admin.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class);
    }

    private static final String METHOD = """
            - name: ipmi
              agent: fence_ipmilan
              parameters: [{name: ip, value: 198.18.0.10}, {name: username, value: admin}]
              secretParameters:
                - parameter: password
                  secretRef: {namespace: default, name: bmc, key: password}
            """;

    private static String stages(String methods) {
        return "nodeNames: [node-a]\nstages:\n  - name: bmc\n    methods:\n" + methods.indent(6);
    }

    record Case(String name, String spec, String field, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> invalidConfigs() {
        return Stream.of(
                new Case("no nodes", "stages:\n  - name: bmc\n    methods:\n" + METHOD.indent(6), "spec",
                        NodeFencingConfigSpec.NO_NODES_MESSAGE),
                new Case("no stages", "nodeNames: [node-a]\nstages: []", "spec.stages",
                        "should have at least 1 items"),
                new Case("agent with a path", stages(METHOD.replace("fence_ipmilan", "/bin/sh")),
                        "spec.stages[0].methods[0].agent", "should match '^fence_[a-z0-9_]+$'"),
                new Case("action as a parameter", stages(METHOD.replace("name: username", "name: action")),
                        "spec.stages[0].methods[0].parameters[1].name", FenceMethod.PARAMETER_NAME_MESSAGE),
                new Case("parameter name pattern", stages(METHOD.replace("name: username", "name: User")),
                        "spec.stages[0].methods[0].parameters[1].name",
                        "should match '" + FenceMethod.PARAMETER_PATTERN + "'"),
                new Case("line break in a value",
                        stages(METHOD.replace("value: admin", "value: \"admin\\naction=reboot\"")),
                        "spec.stages[0].methods[0].parameters[1].value",
                        "should match '" + FenceParameter.VALUE_PATTERN + "'"),
                new Case("a parameter listed twice", stages(METHOD.replace("name: username", "name: ip")),
                        "spec.stages[0].methods[0].parameters", FenceMethod.DUPLICATE_PARAMETER_MESSAGE),
                new Case("action as a secret parameter", stages(METHOD.replace("parameter: password",
                        "parameter: action")), "spec.stages[0].methods[0].secretParameters[0].parameter",
                        FenceMethod.PARAMETER_NAME_MESSAGE),
                new Case("a parameter both plain and secret",
                        stages(METHOD.replace("name: username", "name: password")),
                        "spec.stages[0].methods[0].secretParameters", FenceMethod.PARAMETER_TWICE_MESSAGE),
                new Case("two methods with one name", stages(METHOD + METHOD), "spec.stages[0].methods",
                        FenceStage.DUPLICATE_METHOD_MESSAGE),
                new Case("two stages with one name", stages(METHOD) + "\n  - name: bmc\n    methods:\n"
                        + METHOD.indent(6), "spec.stages", NodeFencingConfigSpec.DUPLICATE_STAGE_MESSAGE),
                new Case("executionPolicy enum", stages(METHOD).replace("- name: bmc",
                        "- name: bmc\n    executionPolicy: Any"), "spec.stages[0].executionPolicy",
                        "supported values: \"All\", \"One\""),
                new Case("powerAction enum", stages(METHOD) + "\npowerAction: Cycle", "spec.powerAction",
                        "supported values: \"Off\", \"Reboot\""),
                new Case("timeout pattern", stages(METHOD).replace("- name: bmc",
                        "- name: bmc\n    timeout: 500ms"), "spec.stages[0].timeout",
                        "should match '" + Durations.PATTERN + "'"),
                new Case("secretRef needs a key", stages(METHOD.replace(", key: password", "")),
                        "spec.stages[0].methods[0].secretParameters[0].secretRef.key", "Required value"));
    }

    @ParameterizedTest
    @MethodSource("invalidConfigs")
    void serverRefusesAnInvalidConfigNamingTheFieldAndTheRule(Case c) {
        GenericKubernetesResource config = object("NodeFencingConfig", c.spec());
        assertThatThrownBy(() -> resources("NodeFencingConfig").resource(config).create())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(422);
                    assertThat(e.getMessage()).contains(c.field()).contains(c.message());
                });
    }

    @Test
    void exampleConfigIsAccepted() throws Exception {
        GenericKubernetesResource example;
        try (InputStream in = Files.newInputStream(Path.of("examples", "nodefencingconfig-ipmi.yaml"))) {
            example = admin.getKubernetesSerialization().unmarshal(in, GenericKubernetesResource.class);
        }
        example.getMetadata().setName(KUBE.get().uniqueName("example"));
        GenericKubernetesResource created = resources("NodeFencingConfig").resource(example).create();
        assertThat(created.getMetadata().getUid()).isNotBlank();
    }

    @Test
    void nodeFencingSpecIsImmutableAndItsStatusIsASubresource() {
        GenericKubernetesResource record = resources("NodeFencing").resource(object("NodeFencing",
                "nodeName: node-a\nnodeGroup: worker\nreason: test\nconfig: worker-ipmi")).create();
        record.setAdditionalProperty("status", Map.of("phase", "Fencing"));
        GenericKubernetesResource withStatus = resources("NodeFencing").resource(record).updateStatus();
        assertThat(withStatus.getAdditionalProperties().get("status")).isEqualTo(Map.of("phase", "Fencing"));

        @SuppressWarnings("unchecked")
        Map<String, Object> spec = (Map<String, Object>) withStatus.getAdditionalProperties().get("spec");
        spec.put("nodeName", "node-b");
        assertThatThrownBy(() -> resources("NodeFencing").resource(withStatus).update())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(422);
                    assertThat(e.getMessage()).contains(NodeFencingSpec.IMMUTABLE_MESSAGE);
                });
    }

    @Test
    void nodeFencingPhaseIsAnEnum() {
        GenericKubernetesResource record = resources("NodeFencing").resource(object("NodeFencing",
                "nodeName: node-a\nconfig: worker-ipmi")).create();
        record.setAdditionalProperty("status", Map.of("phase", "Done"));
        assertThatThrownBy(() -> resources("NodeFencing").resource(record).updateStatus())
                .isInstanceOfSatisfying(KubernetesClientException.class,
                        e -> assertThat(e.getMessage()).contains("status.phase"));
    }
}
