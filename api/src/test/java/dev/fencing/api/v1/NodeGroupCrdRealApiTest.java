package dev.fencing.api.v1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.policy.PolicyResolver;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionCondition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
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

    /**
     * One NodeGroup breaking one rule: {@code rule} names the rule in the schema ({@code <schema path> <keyword>},
     * CEL rules as {@code <schema path> cel <message>}), {@code field} and {@code message} what the server answers.
     */
    record Case(String name, String rule, String spec, String field, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static final String F = "spec.fencing";
    private static final String TIMEOUT = F + ".watchdog.timeout";
    private static final String TIE_BREAKERS = F + ".quorum.tieBreakers";

    static Stream<Case> invalidNodeGroups() {
        return Stream.of(
                // spec
                new Case("nodeType is required", "spec required nodeType", "fencing: {mode: Watchdog}",
                        "spec.nodeType", "Required value"),
                new Case("nodeType enum", "spec.nodeType enum", "nodeType: Cloud", "spec.nodeType",
                        "Unsupported value: \"Cloud\": supported values: \"CloudEphemeral\", \"CloudPermanent\", "
                                + "\"CloudStatic\", \"Static\""),
                type(F, "nodeType: Static\nfencing: on", "string", "object"),
                // fencing enums
                new Case("mode enum", F + ".mode enum", fencing("mode: Armed"), F + ".mode",
                        "Unsupported value: \"Armed\": supported values: \"Notify\", \"Watchdog\""),
                new Case("profile enum", F + ".profile enum", fencing("profile: Fast"), F + ".profile",
                        "Unsupported value: \"Fast\": supported values: \"Auto\", \"Critical\", \"Medium\", "
                                + "\"Moderate\", \"Slow\""),
                new Case("quorumLossAction enum", F + ".quorumLossAction enum", fencing("quorumLossAction: Reboot"),
                        F + ".quorumLossAction",
                        "Unsupported value: \"Reboot\": supported values: \"Exclude\", \"Fence\", \"Wait\""),
                // fencing CEL
                cel("Fence needs mode Watchdog", F, fencing("mode: Notify\nquorumLossAction: Fence"),
                        F + ".quorumLossAction", FENCE_NEEDS_WATCHDOG),
                cel("timeout below 5s needs Critical (profile Auto)", F,
                        fencing("profile: Auto\nwatchdog: {timeout: 3s}"), TIMEOUT,
                        PolicyResolver.WATCHDOG_TIMEOUT_NEEDS_CRITICAL_MESSAGE),
                cel("timeout below 5s needs Critical (profile absent)", F, fencing("watchdog: {timeout: 4s}"), TIMEOUT,
                        PolicyResolver.WATCHDOG_TIMEOUT_NEEDS_CRITICAL_MESSAGE),
                cel("timeout below 5s needs Critical (profile Medium)", F,
                        fencing("profile: Medium\nwatchdog: {timeout: 2s}"), TIMEOUT,
                        PolicyResolver.WATCHDOG_TIMEOUT_NEEDS_CRITICAL_MESSAGE),
                // watchdog.timeout: a value the pattern refuses is reported by the pattern alone
                new Case("timeout pattern", TIMEOUT + " pattern", fencing("watchdog: {timeout: '60'}"), TIMEOUT,
                        "should match '^[0-9]+[smh]$'"),
                new Case("timeout pattern (sub-second unit)", TIMEOUT + " pattern",
                        fencing("watchdog: {timeout: 500ms}"), TIMEOUT, "should match '^[0-9]+[smh]$'"),
                cel("timeout below 2s even with Critical", TIMEOUT,
                        fencing("profile: Critical\nwatchdog: {timeout: 1s}"), TIMEOUT,
                        PolicyResolver.WATCHDOG_TIMEOUT_RANGE_MESSAGE),
                cel("timeout above 1h", TIMEOUT, fencing("watchdog: {timeout: 61m}"), TIMEOUT,
                        PolicyResolver.WATCHDOG_TIMEOUT_RANGE_MESSAGE),
                type(TIMEOUT, fencing("watchdog: {timeout: 60.5}"), "number", "string"),
                // quorum
                cel("quorum.size zero", F + ".quorum.size", fencing("quorum: {size: 0}"), F + ".quorum.size",
                        QUORUM_SIZE),
                cel("quorum.size negative", F + ".quorum.size", fencing("quorum: {size: -2}"), F + ".quorum.size",
                        QUORUM_SIZE),
                cel("quorum.size word other than Auto", F + ".quorum.size", fencing("quorum: {size: Half}"),
                        F + ".quorum.size", QUORUM_SIZE),
                new Case("tieBreakers enum", TIE_BREAKERS + ".items enum",
                        fencing("quorum: {tieBreakers: [ControlPlane, Coin]}"), TIE_BREAKERS + "[1]",
                        "Unsupported value: \"Coin\": supported values: \"APIReachable\", \"ControlPlane\", "
                                + "\"Disk\", \"LowestName\""),
                cel("tieBreakers repeat", TIE_BREAKERS,
                        fencing("quorum: {tieBreakers: [LowestName, ControlPlane, LowestName]}"), TIE_BREAKERS,
                        TIE_BREAKER_REPEAT),
                cel("Disk needs disk.device", F, fencing("quorum: {tieBreakers: [ControlPlane, Disk]}"),
                        TIE_BREAKERS, PolicyResolver.DISK_NEEDS_DEVICE_MESSAGE),
                new Case("disk.device pattern", F + ".disk.device pattern", fencing("disk: {device: dev/sdb}"),
                        F + ".disk.device", "should match '^/.*$'"),
                new Case("disk.ioTimeout pattern", F + ".disk.ioTimeout pattern",
                        fencing("disk: {device: /dev/sdb, ioTimeout: 5 s}"), F + ".disk.ioTimeout", DURATION_PATTERN),
                // Four spellings and no repeats: a fifth entry always repeats one; the server reports the length
                // and skips the CEL rules.
                new Case("tieBreakers maxItems", TIE_BREAKERS + " maxItems",
                        fencing("quorum: {tieBreakers: [ControlPlane, LowestName, APIReachable, LowestName, "
                                + "ControlPlane]}"), TIE_BREAKERS, "Too many: 5: must have at most 4 items"),
                type(TIE_BREAKERS, fencing("quorum: {tieBreakers: ControlPlane}"), "string", "array"),
                // timings: durations
                duration("probeInterval"), duration("probeTimeout"), duration("gossipInterval"),
                duration("pushPullInterval"), duration("heartbeatInterval"), duration("quorumWindow"),
                duration("evaluationTick"), duration("feedInterval"), duration("armingDelay"),
                duration("fenceMargin"),
                // timings: counts
                bound("suspicionMult", "minimum", "0", "should be greater than or equal to 1"),
                bound("suspicionMult", "maximum", "1001", "should be less than or equal to 1000"),
                bound("suspicionMaxTimeoutMult", "minimum", "0", "should be greater than or equal to 1"),
                bound("suspicionMaxTimeoutMult", "maximum", "1001", "should be less than or equal to 1000"),
                bound("gossipNodes", "minimum", "0", "should be greater than or equal to 1"),
                bound("gossipNodes", "maximum", "1001", "should be less than or equal to 1000"),
                bound("retransmitMult", "minimum", "0", "should be greater than or equal to 1"),
                bound("retransmitMult", "maximum", "1001", "should be less than or equal to 1000"),
                type(F + ".timings.gossipNodes", fencing("timings: {gossipNodes: 2.5}"), "number", "integer"),
                bound("localHealthCap", "minimum", "0.5", "should be greater than or equal to 1"),
                bound("localHealthCap", "maximum", "4.5", "should be less than or equal to 4"),
                type(F + ".timings", fencing("timings: fast"), "string", "object"),
                // storm and afterFence
                cel("minHealthy word", F + ".storm.minHealthy", fencing("storm: {minHealthy: half}"),
                        F + ".storm.minHealthy", FencingStorm.MIN_HEALTHY_MESSAGE),
                cel("minHealthy above 100%", F + ".storm.minHealthy", fencing("storm: {minHealthy: 101%}"),
                        F + ".storm.minHealthy", FencingStorm.MIN_HEALTHY_MESSAGE),
                cel("minHealthy negative", F + ".storm.minHealthy", fencing("storm: {minHealthy: -1}"),
                        F + ".storm.minHealthy", FencingStorm.MIN_HEALTHY_MESSAGE),
                new Case("maxConcurrent minimum", F + ".storm.maxConcurrent minimum",
                        fencing("storm: {maxConcurrent: 0}"), F + ".storm.maxConcurrent",
                        "should be greater than or equal to 1"),
                new Case("cooldown pattern", F + ".storm.cooldown pattern", fencing("storm: {cooldown: 10 min}"),
                        F + ".storm.cooldown", DURATION_PATTERN),
                new Case("afterFence enum", F + ".afterFence enum", fencing("afterFence: Reboot"),
                        F + ".afterFence", "Unsupported value: \"Reboot\": supported values: \"Auto\", "
                                + "\"DeleteNode\", \"Taint\""),
                new Case("gossipLabel enum", F + ".gossipLabel enum", fencing("gossipLabel: Off"),
                        F + ".gossipLabel", "Unsupported value: \"Off\": supported values: \"GroupName\", "
                                + "\"None\""),
                // gossip networks
                new Case("networks maxItems", F + ".networks maxItems",
                        fencing("networks: [10.0.0.0/24, 10.1.0.0/24, 10.2.0.0/24, 10.3.0.0/24, 10.4.0.0/24]"),
                        F + ".networks", "Too many: 5: must have at most 4 items"),
                new Case("reachability enum", F + ".reachability enum", fencing("reachability: Some"),
                        F + ".reachability", "Unsupported value: \"Some\": supported values: \"All\", \"Any\""));
    }

    private static String fencing(String fields) {
        return "nodeType: Static\nfencing:\n" + fields.indent(2);
    }

    private static Case cel(String name, String declaredAt, String spec, String field, String message) {
        return new Case(name, declaredAt + " cel " + message, spec, field, message);
    }

    private static Case type(String field, String spec, String given, String type) {
        return new Case(field + " is of type " + type, field + " type", spec, field,
                "Invalid value: \"" + given + "\": " + field + " in body must be of type " + type);
    }

    private static Case duration(String name) {
        String field = F + ".timings." + name;
        return new Case(name + " pattern", field + " pattern", fencing("timings: {" + name + ": 2 s}"), field,
                DURATION_PATTERN);
    }

    private static Case bound(String name, String keyword, String value, String message) {
        String field = F + ".timings." + name;
        return new Case(name + " " + keyword, field + " " + keyword,
                fencing("timings: {" + name + ": " + value + "}"), field, message);
    }

    /** Every validation the generated schema declares has a row: a rule added to the CRD needs a case here. */
    @Test
    void everyRuleOfTheSchemaHasACase() throws Exception {
        CustomResourceDefinition crd;
        try (InputStream in = NodeGroupCrdRealApiTest.class.getResourceAsStream(
                "/META-INF/fabric8/" + NodeGroup.CRD_NAME + "-v1.yml")) {
            crd = admin.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
        }
        Set<String> declared = new TreeSet<>();
        rules("", crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema(), declared);
        Set<String> covered = invalidNodeGroups().map(Case::rule).collect(Collectors.toCollection(TreeSet::new));
        assertThat(covered).containsAll(declared);
        assertThat(declared).as("the walk finds enums, patterns, bounds and CEL rules").hasSizeGreaterThan(30);
    }

    private static void rules(String path, JSONSchemaProps schema, Set<String> out) {
        if (schema.getEnum() != null && !schema.getEnum().isEmpty()) {
            out.add(path + " enum");
        }
        if (schema.getPattern() != null) {
            out.add(path + " pattern");
        }
        if (schema.getMinimum() != null) {
            out.add(path + " minimum");
        }
        if (schema.getMaximum() != null) {
            out.add(path + " maximum");
        }
        if (schema.getMaxItems() != null) {
            out.add(path + " maxItems");
        }
        if (schema.getRequired() != null) {
            schema.getRequired().forEach(r -> out.add(path + " required " + r));
        }
        if (schema.getXKubernetesValidations() != null) {
            schema.getXKubernetesValidations().forEach(v -> out.add(path + " cel " + v.getMessage()));
        }
        if (schema.getProperties() != null) {
            schema.getProperties().forEach((name, p) -> rules(path.isEmpty() ? name : path + "." + name, p, out));
        }
        if (schema.getItems() != null && schema.getItems().getSchema() != null) {
            rules(path + ".items", schema.getItems().getSchema(), out);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidNodeGroups")
    void serverRejectsANodeGroupBreakingOneRule(Case c) {
        GenericKubernetesResource ng = nodeGroup("invalid", c.spec());
        assertThatThrownBy(() -> create(ng)).isInstanceOfSatisfying(KubernetesClientException.class, e -> {
            assertThat(e.getCode()).as("HTTP status of %s", e.getMessage()).isEqualTo(422);
            List<String> causes = causes(e);
            assertThat(causes).as("causes").first().asString().startsWith(c.field() + ": ").contains(c.message());
            // A type error is also reported by the format check, without a field; nothing else may fire.
            assertThat(causes.subList(1, causes.size())).as("causes").allSatisfy(x -> assertThat(x)
                    .startsWith("<nil>: Invalid value: \"\": Checked value must be of type")
                    .endsWith(" in " + c.field()));
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
                        fencing("quorum: {size: 3, tieBreakers: [LowestName]}"))),
                Arguments.of(Named.of("empty tie-breaker list", fencing("quorum: {tieBreakers: []}"))),
                Arguments.of(Named.of("storm limits as a percentage",
                        fencing("storm: {minHealthy: 40%, maxConcurrent: 2, cooldown: 5m}\nafterFence: Taint"))),
                Arguments.of(Named.of("storm limits as a count", fencing("storm: {minHealthy: 3}\nafterFence: "
                        + "DeleteNode"))),
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

    @Test
    void tableOutputShowsReadyAndQuorumHealthyFromTheirConditionsAndAge() throws Exception {
        GenericKubernetesResource created = create(nodeGroup("table", fencing("mode: Notify")));
        String name = created.getMetadata().getName();
        NodeGroup typed = admin.resources(NodeGroup.class).withName(name).get();
        typed.setStatus(new NodeGroupStatus().withExpected(3).withArmed(2).withHeard(3).withConditions(List.of(
                new ConditionBuilder().withType("QuorumHealthy").withStatus("False").withReason("QuorumLost")
                        .withMessage("m").withLastTransitionTime("2026-01-01T00:00:00Z").build(),
                new ConditionBuilder().withType("Ready").withStatus("True").withReason("AgentsReporting")
                        .withMessage("m").withLastTransitionTime("2026-01-01T00:00:00Z").build())));
        admin.resources(NodeGroup.class).resource(typed).updateStatus();

        // What kubectl get asks for: the server renders the CRD's printer columns into a meta.k8s.io Table.
        HttpRequest request = admin.getHttpClient().newHttpRequestBuilder()
                .uri(admin.getMasterUrl().toString().replaceAll("/$", "") + "/apis/" + NodeGroup.GROUP + "/"
                        + NodeGroup.VERSION + "/" + NodeGroup.PLURAL + "/" + name + "?includeObject=None")
                .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").build();
        HttpResponse<String> response = admin.getHttpClient().sendAsync(request, String.class)
                .get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(response.code()).as(response.body()).isEqualTo(200);
        Map<String, Object> table = admin.getKubernetesSerialization().unmarshal(response.body(), Map.class);
        List<Map<String, Object>> columns = (List<Map<String, Object>>) table.get("columnDefinitions");
        List<String> names = columns.stream().map(c -> (String) c.get("name")).toList();
        List<Object> cells = (List<Object>) ((List<Map<String, Object>>) table.get("rows")).get(0).get("cells");
        Map<String, Object> byName = new java.util.HashMap<>();
        for (int i = 0; i < names.size(); i++) {
            byName.put(names.get(i), cells.get(i));
        }
        assertThat(byName).containsEntry("Name", name).containsEntry("Ready", "True")
                .containsEntry("QuorumHealthy", "False")
                .containsEntry("Reason", "AgentsReporting");
        assertThat(String.valueOf(byName.get("Expected"))).isEqualTo("3");
        assertThat((String) byName.get("Age")).matches("[0-9]+[smhd].*");
        assertThat(columns).filteredOn(c -> "Reason".equals(c.get("name"))).singleElement()
                .satisfies(c -> assertThat(String.valueOf(c.get("priority"))).isEqualTo("1"));
    }
}
