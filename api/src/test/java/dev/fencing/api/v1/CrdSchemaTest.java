package dev.fencing.api.v1;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.policy.DurationFormat;
import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.GossipLabel;
import dev.fencing.policy.Mode;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.policy.Profile;
import dev.fencing.policy.AfterFence;
import dev.fencing.policy.QuorumLossAction;
import dev.fencing.policy.TieBreakerKind;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.InputStream;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The generated CRD says what the policy module means: same spellings, same defaults, same patterns. */
class CrdSchemaTest {

    private static CustomResourceDefinitionVersion version;
    private static JSONSchemaProps fencing;

    @BeforeAll
    static void loadGeneratedCrd() throws Exception {
        try (InputStream in = CrdSchemaTest.class.getResourceAsStream(
                "/META-INF/fabric8/" + NodeGroup.CRD_NAME + "-v1.yml")) {
            assertThat(in).as("generated CRD on the classpath").isNotNull();
            CustomResourceDefinition crd = new KubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
            assertThat(crd.getSpec().getScope()).isEqualTo("Cluster");
            assertThat(crd.getSpec().getGroup()).isEqualTo("deckhouse.io");
            version = crd.getSpec().getVersions().get(0);
        }
        fencing = spec().getProperties().get("fencing");
    }

    private static JSONSchemaProps spec() {
        return version.getSchema().getOpenAPIV3Schema().getProperties().get("spec");
    }

    private static <E extends Enum<E>> List<String> spellings(E[] values, Function<E, String> crdValue) {
        return Arrays.stream(values).map(crdValue).sorted().toList();
    }

    private static List<String> enumOf(JSONSchemaProps props) {
        return props.getEnum().stream().map(n -> n.asText()).sorted().toList();
    }

    @Test
    void enumsAreThePolicySpellings() {
        assertThat(enumOf(fencing.getProperties().get("mode"))).isEqualTo(spellings(Mode.values(), Mode::crdValue));
        assertThat(enumOf(fencing.getProperties().get("quorumLossAction")))
                .isEqualTo(spellings(QuorumLossAction.values(), QuorumLossAction::crdValue));
        assertThat(enumOf(fencing.getProperties().get("profile")))
                .isEqualTo(spellings(Profile.values(), Profile::crdValue));
        assertThat(enumOf(fencing.getProperties().get("quorum").getProperties().get("tieBreakers").getItems()
                .getSchema())).isEqualTo(spellings(TieBreakerKind.values(), TieBreakerKind::crdValue));
        assertThat(enumOf(fencing.getProperties().get("afterFence")))
                .isEqualTo(spellings(AfterFence.values(), AfterFence::crdValue));
        assertThat(fencing.getProperties().get("storm").getProperties().get("minHealthy")
                .getXKubernetesIntOrString()).isTrue();
        assertThat(enumOf(fencing.getProperties().get("gossipLabel")))
                .isEqualTo(spellings(GossipLabel.values(), GossipLabel::crdValue));
        assertThat(enumOf(spec().getProperties().get("nodeType")))
                .isEqualTo(spellings(NodeType.values(), NodeType::crdValue));
        assertThat(spec().getRequired()).containsExactly("nodeType");
        assertThat(spec().getXKubernetesPreserveUnknownFields())
                .as("other Deckhouse NodeGroup spec fields are kept, not pruned").isTrue();
    }

    @Test
    void schemaDefaultsAreThePolicyDefaults() {
        assertThat(fencing.getProperties().get("mode").getDefault().asText())
                .isEqualTo(FencingSpec.DEFAULT_MODE.crdValue());
        assertThat(fencing.getProperties().get("profile").getDefault().asText())
                .isEqualTo(FencingSpec.DEFAULT_PROFILE.crdValue());
    }

    @Test
    void durationsUseThePolicyPatterns() {
        assertThat(fencing.getProperties().get("watchdog").getProperties().get("timeout").getPattern())
                .isEqualTo(DurationFormat.WHOLE_UNIT_PATTERN);
        JSONSchemaProps timings = fencing.getProperties().get("timings");
        assertThat(timings.getProperties()).hasSize(15);
        assertThat(timings.getProperties().get("feedInterval").getPattern()).isEqualTo(DurationFormat.PATTERN);
        assertThat(timings.getProperties().get("localHealthCap").getMinimum()).isEqualTo(1.0);
        assertThat(timings.getProperties().get("localHealthCap").getMaximum()).isEqualTo(4.0);
        assertThat(timings.getProperties().get("gossipNodes").getMinimum()).isEqualTo(1.0);
    }

    @Test
    void fenceWithNotifyIsRejectedByCel() {
        assertThat(fencing.getXKubernetesValidations()).extracting(ValidationRule::getRule).contains(
                "!has(self.quorumLossAction) || self.quorumLossAction != 'Fence' || !has(self.mode) "
                        + "|| self.mode == 'Watchdog'");
        JSONSchemaProps quorum = fencing.getProperties().get("quorum");
        assertThat(quorum.getProperties().get("size").getXKubernetesIntOrString()).isTrue();
        assertThat(quorum.getProperties().get("size").getXKubernetesValidations()).extracting(ValidationRule::getRule)
                .containsExactly("type(self) == string ? self == 'Auto' : self >= 1");
    }

    /** The CEL rules accept exactly what {@code PolicyResolver} accepts: 2s..1h, below 5s only with Critical. */
    @Test
    void watchdogTimeoutRangeAndTheCriticalFloorAreCelRulesWithThePolicyMessages() {
        JSONSchemaProps timeout = fencing.getProperties().get("watchdog").getProperties().get("timeout");
        assertThat(timeout.getXKubernetesValidations()).singleElement().satisfies(rule -> {
            assertThat(rule.getRule()).isEqualTo("!self.matches('" + DurationFormat.WHOLE_UNIT_PATTERN + "') || "
                    + "(duration(self) >= duration('"
                    + DurationFormat.format(PolicyResolver.MIN_CRITICAL_WATCHDOG_TIMEOUT) + "') && duration(self) <= "
                    + "duration('" + DurationFormat.format(PolicyResolver.MAX_WATCHDOG_TIMEOUT) + "'))");
            assertThat(rule.getMessage()).isEqualTo(PolicyResolver.WATCHDOG_TIMEOUT_RANGE_MESSAGE);
        });
        assertThat(fencing.getXKubernetesValidations()).filteredOn(r -> ".watchdog.timeout".equals(r.getFieldPath()))
                .singleElement().satisfies(rule -> {
                    assertThat(rule.getRule()).isEqualTo("!has(self.watchdog) || !has(self.watchdog.timeout) "
                            + "|| !self.watchdog.timeout.matches('" + DurationFormat.WHOLE_UNIT_PATTERN + "') "
                            + "|| duration(self.watchdog.timeout) >= duration('"
                            + DurationFormat.format(PolicyResolver.MIN_WATCHDOG_TIMEOUT) + "') "
                            + "|| (has(self.profile) && self.profile == '" + Profile.CRITICAL.crdValue() + "')");
                    assertThat(rule.getMessage()).isEqualTo(PolicyResolver.WATCHDOG_TIMEOUT_NEEDS_CRITICAL_MESSAGE);
                });
    }

    /** Disk is a known spelling; a CEL rule on the fencing block refuses it without disk.device. */
    @Test
    void diskNeedsADeviceByCelWithThePolicyMessage() {
        JSONSchemaProps tieBreakers = fencing.getProperties().get("quorum").getProperties().get("tieBreakers");
        assertThat(enumOf(tieBreakers.getItems().getSchema())).contains(TieBreakerKind.DISK.crdValue());
        assertThat(tieBreakers.getXKubernetesValidations()).noneMatch(r -> r.getRule().contains("Disk"));
        assertThat(fencing.getXKubernetesValidations()).filteredOn(r -> r.getRule().contains("Disk"))
                .singleElement().satisfies(rule -> {
                    assertThat(rule.getRule()).contains("has(self.disk.device)");
                    assertThat(rule.getMessage()).isEqualTo(PolicyResolver.DISK_NEEDS_DEVICE_MESSAGE);
                });
        assertThat(fencing.getProperties().get("disk").getProperties()).containsKeys("device", "required",
                "ioTimeout");
    }

    @Test
    void statusIsASubresourceShowingDerivedTimings() {
        assertThat(version.getSubresources().getStatus()).isNotNull();
        JSONSchemaProps status = version.getSchema().getOpenAPIV3Schema().getProperties().get("status");
        assertThat(status.getProperties()).containsKeys("observedGeneration", "conditions", "expected", "armed",
                "heard", "quorumSize", "fencedNodes", "timings");
        assertThat(status.getProperties().get("timings").getProperties())
                .containsKeys("profile", "tStop", "safeToAssumeFencedDelay");
        assertThat(version.getAdditionalPrinterColumns()).extracting(c -> c.getJsonPath())
                .contains(".spec.nodeType", ".status.expected", ".status.armed", ".status.heard",
                        ".status.conditions[?(@.type==\"Ready\")].status", ".metadata.creationTimestamp");
    }
}
