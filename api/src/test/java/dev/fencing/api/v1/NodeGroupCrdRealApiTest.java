package dev.fencing.api.v1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.policy.PolicyResolver;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The generated NodeGroup CRD on a real kube-apiserver: it installs and becomes Established, every OpenAPI and CEL
 * rule it carries is enforced <em>by the server</em> (HTTP 422, the field and the message the docs promise), and
 * every documented shape of a valid NodeGroup is accepted. Each invalid row breaks exactly one rule of an otherwise
 * valid NodeGroup.
 */
class NodeGroupCrdRealApiTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.apiServerOnly();

    /** Added by the server when a type or enum error kept it from evaluating the CEL rules. */
    private static final String CEL_SKIPPED = "some validation rules were not checked because the object was "
            + "invalid; correct the existing errors to complete validation";

    private static final String FENCE_NEEDS_WATCHDOG = "quorumLossAction Fence requires mode Watchdog; set mode: "
            + "Watchdog, or quorumLossAction: Exclude or Wait";
    private static final String QUORUM_SIZE = "quorum.size must be Auto or a positive integer";
    private static final String TIE_BREAKER_REPEAT = "each tie-breaker may be listed once; remove the repeat";
    private static final String DURATION_PATTERN = "should match '^(0|([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+)$'";

    private static KubernetesClient admin;

    @BeforeAll
    static void installCrd() throws Exception {
        admin = KUBE.get().adminClient();
        CustomResourceDefinition crd;
        try (InputStream in = NodeGroupCrdRealApiTest.class.getResourceAsStream(
                "/META-INF/fabric8/" + NodeGroup.CRD_NAME + "-v1.yml")) {
            crd = admin.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
        }
        // Server-side apply: other test classes in this JVM may install the same CRD.
        admin.apiextensions().v1().customResourceDefinitions().resource(crd)
                .fieldManager("nodegroup-crd-real-api-test").forceConflicts().serverSideApply();
        await().atMost(Duration.ofSeconds(30)).until(() -> established(admin.apiextensions().v1()
                .customResourceDefinitions().withName(NodeGroup.CRD_NAME).get()));
    }

    private static boolean established(CustomResourceDefinition crd) {
        return crd != null && crd.getStatus() != null && crd.getStatus().getConditions().stream()
                .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>> nodeGroups() {
        return admin.genericKubernetesResources(NodeGroup.GROUP + "/" + NodeGroup.VERSION, NodeGroup.KIND);
    }

    private static GenericKubernetesResource nodeGroup(String prefix, String specYaml) {
        String yaml = "apiVersion: deckhouse.io/v1\nkind: NodeGroup\nmetadata:\n  name: "
                + KUBE.get().uniqueName(prefix) + "\nspec:\n" + specYaml.stripIndent().indent(2);
        return admin.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class);
    }

    private static GenericKubernetesResource create(GenericKubernetesResource ng) {
        return nodeGroups().resource(ng).create();
    }

    @Test
    void crdIsEstablishedWithAStructuralSchemaAndItsNames() {
        CustomResourceDefinition crd = admin.apiextensions().v1().customResourceDefinitions()
                .withName(NodeGroup.CRD_NAME).get();
        assertThat(crd.getStatus().getConditions()).extracting(CustomResourceDefinitionCondition::getType,
                CustomResourceDefinitionCondition::getStatus)
                .contains(org.assertj.core.groups.Tuple.tuple("Established", "True"),
                        org.assertj.core.groups.Tuple.tuple("NamesAccepted", "True"))
                .doesNotContain(org.assertj.core.groups.Tuple.tuple("NonStructuralSchema", "True"));
        assertThat(crd.getStatus().getAcceptedNames().getKind()).isEqualTo(NodeGroup.KIND);
        assertThat(crd.getStatus().getAcceptedNames().getPlural()).isEqualTo(NodeGroup.PLURAL);
    }

    /** One rule broken per row: the server answers 422 naming that field with that rule's message. */
    static Stream<Arguments> invalidNodeGroups() {
        return Stream.of(
                // spec
                row("nodeType is required", "fencing: {mode: Watchdog}", "spec.nodeType", "Required value"),
                row("nodeType enum", "nodeType: Cloud",
                        "spec.nodeType", "Unsupported value: \"Cloud\": supported values: \"CloudEphemeral\", "
                                + "\"CloudPermanent\", \"CloudStatic\", \"Static\""),
                row("fencing is an object", "nodeType: Static\nfencing: on",
                        "spec.fencing", "Invalid value: \"string\": spec.fencing in body must be of type object"),
                // fencing enums
                row("mode enum", fencing("mode: Armed"), "spec.fencing.mode",
                        "Unsupported value: \"Armed\": supported values: \"Notify\", \"Watchdog\""),
                row("profile enum", fencing("profile: Fast"), "spec.fencing.profile",
                        "Unsupported value: \"Fast\": supported values: \"Auto\", \"Critical\", \"Medium\", "
                                + "\"Moderate\", \"Slow\""),
                row("quorumLossAction enum", fencing("quorumLossAction: Reboot"), "spec.fencing.quorumLossAction",
                        "Unsupported value: \"Reboot\": supported values: \"Exclude\", \"Fence\", \"Wait\""),
                // fencing CEL
                row("Fence needs mode Watchdog", fencing("mode: Notify\nquorumLossAction: Fence"),
                        "spec.fencing.quorumLossAction", FENCE_NEEDS_WATCHDOG),
                row("timeout below 5s needs Critical (profile Auto)", fencing("profile: Auto\nwatchdog: {timeout: 3s}"),
                        "spec.fencing.watchdog.timeout", PolicyResolver.WATCHDOG_TIMEOUT_NEEDS_CRITICAL_MESSAGE),
                row("timeout below 5s needs Critical (profile absent)", fencing("watchdog: {timeout: 4s}"),
                        "spec.fencing.watchdog.timeout", PolicyResolver.WATCHDOG_TIMEOUT_NEEDS_CRITICAL_MESSAGE),
                row("timeout below 5s needs Critical (profile Medium)",
                        fencing("profile: Medium\nwatchdog: {timeout: 2s}"),
                        "spec.fencing.watchdog.timeout", PolicyResolver.WATCHDOG_TIMEOUT_NEEDS_CRITICAL_MESSAGE),
                // watchdog.timeout
                row("timeout pattern", fencing("watchdog: {timeout: '60'}"), "spec.fencing.watchdog.timeout",
                        "should match '^[0-9]+[smh]$'"),
                row("timeout pattern (sub-second unit)", fencing("watchdog: {timeout: 500ms}"),
                        "spec.fencing.watchdog.timeout", "should match '^[0-9]+[smh]$'"),
                row("timeout below 2s even with Critical", fencing("profile: Critical\nwatchdog: {timeout: 1s}"),
                        "spec.fencing.watchdog.timeout", PolicyResolver.WATCHDOG_TIMEOUT_RANGE_MESSAGE),
                row("timeout above 1h", fencing("watchdog: {timeout: 61m}"),
                        "spec.fencing.watchdog.timeout", PolicyResolver.WATCHDOG_TIMEOUT_RANGE_MESSAGE),
                row("timeout is a string", fencing("watchdog: {timeout: 60.5}"), "spec.fencing.watchdog.timeout",
                        "Invalid value: \"number\": spec.fencing.watchdog.timeout in body must be of type string"),
                // quorum
                row("quorum.size zero", fencing("quorum: {size: 0}"), "spec.fencing.quorum.size", QUORUM_SIZE),
                row("quorum.size negative", fencing("quorum: {size: -2}"), "spec.fencing.quorum.size", QUORUM_SIZE),
                row("quorum.size word other than Auto", fencing("quorum: {size: Half}"), "spec.fencing.quorum.size",
                        QUORUM_SIZE),
                row("tieBreakers enum", fencing("quorum: {tieBreakers: [ControlPlane, Coin]}"),
                        "spec.fencing.quorum.tieBreakers[1]", "Unsupported value: \"Coin\": supported values: "
                                + "\"APIReachable\", \"ControlPlane\", \"Disk\", \"LowestName\""),
                row("tieBreakers repeat", fencing("quorum: {tieBreakers: [LowestName, ControlPlane, LowestName]}"),
                        "spec.fencing.quorum.tieBreakers", TIE_BREAKER_REPEAT),
                row("Disk is refused", fencing("quorum: {tieBreakers: [ControlPlane, Disk]}"),
                        "spec.fencing.quorum.tieBreakers", PolicyResolver.DISK_NOT_AVAILABLE_MESSAGE),
                // Four spellings and no repeats: a fifth entry always repeats one, so both rules answer.
                row("tieBreakers maxItems",
                        fencing("quorum: {tieBreakers: [ControlPlane, LowestName, APIReachable, LowestName, "
                                + "ControlPlane]}"),
                        "spec.fencing.quorum.tieBreakers", "Too many: 5: must have at most 4 items"),
                row("tieBreakers is a list", fencing("quorum: {tieBreakers: ControlPlane}"),
                        "spec.fencing.quorum.tieBreakers",
                        "Invalid value: \"string\": spec.fencing.quorum.tieBreakers in body must be of type array"),
                // timings: durations
                duration("probeInterval"), duration("probeTimeout"), duration("gossipInterval"),
                duration("pushPullInterval"), duration("heartbeatInterval"), duration("quorumWindow"),
                duration("evaluationTick"), duration("feedInterval"), duration("armingDelay"),
                duration("fenceMargin"),
                // timings: counts
                count("suspicionMult", 0, "should be greater than or equal to 1"),
                count("suspicionMult", 1001, "should be less than or equal to 1000"),
                count("suspicionMaxTimeoutMult", 0, "should be greater than or equal to 1"),
                count("suspicionMaxTimeoutMult", 1001, "should be less than or equal to 1000"),
                count("gossipNodes", 0, "should be greater than or equal to 1"),
                count("gossipNodes", 1001, "should be less than or equal to 1000"),
                count("retransmitMult", 0, "should be greater than or equal to 1"),
                count("retransmitMult", 1001, "should be less than or equal to 1000"),
                row("gossipNodes is an integer", fencing("timings: {gossipNodes: 2.5}"),
                        "spec.fencing.timings.gossipNodes", "Invalid value: \"number\": "
                                + "spec.fencing.timings.gossipNodes in body must be of type integer"),
                row("localHealthCap minimum", fencing("timings: {localHealthCap: 0.5}"),
                        "spec.fencing.timings.localHealthCap", "should be greater than or equal to 1"),
                row("localHealthCap maximum", fencing("timings: {localHealthCap: 4.5}"),
                        "spec.fencing.timings.localHealthCap", "should be less than or equal to 4"),
                row("timings is an object", fencing("timings: fast"), "spec.fencing.timings",
                        "Invalid value: \"string\": spec.fencing.timings in body must be of type object"));
    }

    private static String fencing(String fields) {
        return "nodeType: Static\nfencing:\n" + fields.indent(2);
    }

    private static Arguments row(String name, String spec, String field, String message) {
        return Arguments.of(Named.of(name, spec), field, message);
    }

    private static Arguments duration(String field) {
        return row(field + " pattern", fencing("timings: {" + field + ": 2 s}"), "spec.fencing.timings." + field,
                DURATION_PATTERN);
    }

    private static Arguments count(String field, int value, String message) {
        return row(field + " " + value, fencing("timings: {" + field + ": " + value + "}"),
                "spec.fencing.timings." + field, message);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidNodeGroups")
    void serverRejectsANodeGroupBreakingOneRule(String spec, String field, String message) {
        GenericKubernetesResource ng = nodeGroup("invalid", spec);
        assertThatThrownBy(() -> create(ng)).isInstanceOfSatisfying(KubernetesClientException.class, e -> {
            assertThat(e.getCode()).as("HTTP status of %s", e.getMessage()).isEqualTo(422);
            List<String> causes = causes(e);
            assertThat(causes).as("causes").first().asString().startsWith(field + ": ").contains(message);
            // A type error is also reported by the format check, without a field; nothing else may fire.
            assertThat(causes.subList(1, causes.size())).as("causes").allSatisfy(c -> assertThat(c)
                    .startsWith("<nil>: Invalid value: \"\": Checked value must be of type")
                    .endsWith(" in " + field));
        });
        assertThat(nodeGroups().withName(ng.getMetadata().getName()).get()).isNull();
    }

    /** {@code field: message} of every cause but the note that CEL rules were skipped after a schema error. */
    private static List<String> causes(KubernetesClientException e) {
        return e.getStatus().getDetails().getCauses().stream()
                .filter(c -> !c.getMessage().endsWith(CEL_SKIPPED))
                .map(c -> c.getField() + ": " + c.getMessage()).toList();
    }

    /** Every documented shape, from the smallest (no fencing) to everything set. */
    static Stream<Arguments> validNodeGroups() {
        return Stream.of(
                Arguments.of(Named.of("CloudEphemeral without fencing", "nodeType: CloudEphemeral")),
                Arguments.of(Named.of("CloudPermanent without fencing", "nodeType: CloudPermanent")),
                Arguments.of(Named.of("CloudStatic without fencing", "nodeType: CloudStatic")),
                Arguments.of(Named.of("empty fencing block", fencing("{}"))),
                Arguments.of(Named.of("ARCHITECTURE 3.1 sample", fencing("""
                        mode: Watchdog
                        watchdog: {timeout: 60s}
                        quorumLossAction: Fence
                        profile: Auto
                        quorum: {size: Auto, tieBreakers: [ControlPlane]}
                        timings: {}"""))),
                Arguments.of(Named.of("Notify, no action", fencing("mode: Notify"))),
                Arguments.of(Named.of("Notify + Wait", fencing("mode: Notify\nquorumLossAction: Wait"))),
                Arguments.of(Named.of("Notify + Exclude", fencing("mode: Notify\nquorumLossAction: Exclude"))),
                Arguments.of(Named.of("Watchdog + Exclude", fencing("mode: Watchdog\nquorumLossAction: Exclude"))),
                Arguments.of(Named.of("Fence with defaulted mode", fencing("quorumLossAction: Fence"))),
                Arguments.of(Named.of("Critical 2s", fencing("profile: Critical\nwatchdog: {timeout: 2s}"))),
                Arguments.of(Named.of("Auto 5s", fencing("profile: Auto\nwatchdog: {timeout: 5s}"))),
                Arguments.of(Named.of("Slow 1h", fencing("profile: Slow\nwatchdog: {timeout: 1h}"))),
                Arguments.of(Named.of("Moderate 10m", fencing("profile: Moderate\nwatchdog: {timeout: 10m}"))),
                Arguments.of(Named.of("integer quorum size",
                        fencing("quorum: {size: 3, tieBreakers: [ControlPlane, LowestName, APIReachable]}"))),
                Arguments.of(Named.of("empty tie-breaker list", fencing("quorum: {tieBreakers: []}"))),
                Arguments.of(Named.of("every timing overridden", fencing("""
                        profile: Medium
                        timings:
                          probeInterval: 1s
                          probeTimeout: 500ms
                          suspicionMult: 4
                          suspicionMaxTimeoutMult: 6
                          gossipInterval: 200ms
                          gossipNodes: 3
                          retransmitMult: 4
                          pushPullInterval: 30s
                          heartbeatInterval: 1s
                          quorumWindow: 3s
                          localHealthCap: 1.5
                          evaluationTick: 250ms
                          feedInterval: 2s
                          armingDelay: 1m30s
                          fenceMargin: '0'"""))),
                Arguments.of(Named.of("bounds of counts and cap", fencing("""
                        timings: {suspicionMult: 1, suspicionMaxTimeoutMult: 1000, gossipNodes: 1000,
                          retransmitMult: 1, localHealthCap: 4}"""))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("validNodeGroups")
    void serverAcceptsADocumentedShape(String spec) {
        GenericKubernetesResource created = create(nodeGroup("valid", spec));
        assertThat(created.getMetadata().getUid()).isNotBlank();
        NodeGroup typed = admin.getKubernetesSerialization().convertValue(created, NodeGroup.class);
        assertThat(NodeGroupValidator.validate(typed, 5)).as("the Java validator agrees for a group of 5").isEmpty();
    }

    @Test
    void theCommentedExampleIsAccepted() throws Exception {
        GenericKubernetesResource example;
        try (InputStream in = Files.newInputStream(Path.of("examples", "nodegroup-fencing.yaml"))) {
            example = admin.getKubernetesSerialization().unmarshal(in, GenericKubernetesResource.class);
        }
        example.getMetadata().setName(KUBE.get().uniqueName("example"));
        assertThat(create(example).getMetadata().getGeneration()).isEqualTo(1L);
    }

    @Test
    void serverDefaultsModeAndProfileOnly() {
        GenericKubernetesResource created = create(nodeGroup("defaults", fencing("watchdog: {timeout: 60s}")));
        Map<String, Object> fencing = created.get("spec", "fencing");
        assertThat(fencing).containsEntry("mode", "Watchdog").containsEntry("profile", "Auto")
                .doesNotContainKeys("quorumLossAction", "quorum", "timings");
    }

    @Test
    void otherDeckhouseSpecFieldsArePreserved() {
        GenericKubernetesResource created = create(nodeGroup("deckhouse", """
                nodeType: CloudEphemeral
                cloudInstances: {minPerZone: 1, maxPerZone: 3, classReference: {kind: YandexInstanceClass, name: w}}
                kubelet: {maxPods: 150}
                disruptions: {approvalMode: Automatic}"""));
        assertThat((Map<String, Object>) created.get("spec", "cloudInstances")).containsEntry("maxPerZone", 3);
        assertThat((Map<String, Object>) created.get("spec", "kubelet")).containsEntry("maxPods", 150);
        NodeGroup typed = admin.getKubernetesSerialization().convertValue(created, NodeGroup.class);
        assertThat(typed.getSpec().additionalProperties()).containsKeys("cloudInstances", "kubelet", "disruptions");
    }

    @Test
    void anUpdateIsValidatedLikeACreate() {
        GenericKubernetesResource created = create(nodeGroup("update", fencing("mode: Notify")));
        assertThatThrownBy(() -> nodeGroups().withName(created.getMetadata().getName())
                .edit(ng -> {
                    Map<String, Object> f = ng.get("spec", "fencing");
                    f.put("quorumLossAction", "Fence");
                    return ng;
                }))
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(422);
                    assertThat(e.getStatus().getDetails().getCauses()).singleElement()
                            .satisfies(c -> assertThat(c.getMessage()).endsWith(FENCE_NEEDS_WATCHDOG));
                });
    }
}
