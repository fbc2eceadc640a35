package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.LintResult;
import dev.fencing.nodemanager.escalation.FenceArguments;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.NamedRuleWithOperations;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * controller.powerFencing: the flags, the controller image with the fence agents, the two fencing.deckhouse.io CRDs
 * and their RBAC, the admission policy that keeps nodes from the annotations power fencing expands, all only when
 * enabled.
 */
class PowerFencingChartTest {

    private static final List<String> CRDS = List.of("nodefencingconfigs.fencing.deckhouse.io",
            "nodefencings.fencing.deckhouse.io");

    private static Path generated(String crd) {
        return Path.of(System.getProperty("crd.generated.file", "../api/crds/nodegroups.deckhouse.io-v1.yml"))
                .toAbsolutePath().normalize().resolveSibling(crd + "-v1.yml");
    }

    private static final String FENCE_AGENTS_IMAGE = "ghcr.io/fencing/node-manager-controller-fence-agents:0.1.0";

    @Test
    void offByDefault() {
        Rendered r = FencingChart.render();

        assertThat(r.controllerContainer().getImage()).isEqualTo("ghcr.io/fencing/node-manager-controller:0.1.0");
        assertThat(r.args()).noneMatch(a -> a.startsWith("--power-fencing") || a.startsWith("--fence-agents-dir"));
        assertThat(r.all(CustomResourceDefinition.class)).isEmpty();
        assertThat(r.all(ClusterRole.class)).flatExtracting(ClusterRole::getRules)
                .noneMatch(rule -> rule.getApiGroups().contains("fencing.deckhouse.io"));
        assertThat(r.all(ValidatingAdmissionPolicy.class)).isEmpty();
        assertThat(r.all(ValidatingAdmissionPolicyBinding.class)).isEmpty();
    }

    /**
     * A kubelet may change its own Node's annotations: the policy denies nodes (group {@code system:nodes}) any
     * change to those under the prefix the controller expands, on the Node and its status, at creation too.
     * NodeAnnotationPolicyRealClusterTest shows it on a real API server.
     */
    @Test
    void enabledDeniesNodesAnyChangeToTheAnnotationsPowerFencingExpands() {
        Rendered r = FencingChart.render("controller.powerFencing.enabled", true, "fullnameOverride", "nmc");

        ValidatingAdmissionPolicy policy = r.named(ValidatingAdmissionPolicy.class, "nmc-node-annotations");
        assertThat(policy.getSpec().getFailurePolicy()).isEqualTo("Fail");
        List<NamedRuleWithOperations> rules = policy.getSpec().getMatchConstraints().getResourceRules();
        assertThat(rules).singleElement().satisfies(rule -> {
            assertThat(rule.getApiGroups()).containsExactly("");
            assertThat(rule.getResources()).containsExactly("nodes", "nodes/status");
            assertThat(rule.getOperations()).containsExactly("CREATE", "UPDATE");
        });
        assertThat(policy.getSpec().getMatchConditions()).singleElement().satisfies(c -> assertThat(c.getExpression())
                .isEqualTo("'system:nodes' in request.userInfo.groups"));
        Map<String, String> variables = new HashMap<>();
        policy.getSpec().getVariables().forEach(v -> variables.put(v.getName(), v.getExpression()));
        assertThat(variables).as("the prefix the controller expands").containsEntry("prefix",
                "'" + FenceArguments.NODE_ANNOTATION_PREFIX + "'");
        assertThat(policy.getSpec().getValidations()).singleElement().satisfies(v -> {
            assertThat(v.getExpression()).isEqualTo("size(variables.changed) == 0");
            assertThat(v.getReason()).isEqualTo("Forbidden");
        });
        ValidatingAdmissionPolicyBinding binding = r.named(ValidatingAdmissionPolicyBinding.class,
                "nmc-node-annotations");
        assertThat(binding.getSpec().getPolicyName()).isEqualTo("nmc-node-annotations");
        assertThat(binding.getSpec().getValidationActions()).containsExactly("Deny");
        assertThat(binding.getSpec().getParamRef()).isNull();
        assertThat(binding.getSpec().getMatchResources()).as("every Node").isNull();
    }

    @Test
    void powerFencingNeedsAClusterThatHasValidatingAdmissionPolicyV1() {
        assertThatThrownBy(() -> FencingChart.templateForKubeVersion("1.29.5", "controller.powerFencing.enabled",
                true)).hasMessageContaining("controller.powerFencing.enabled needs Kubernetes 1.30 or later (this is "
                + "v1.29.5)").hasMessageContaining("ValidatingAdmissionPolicy");
        assertThat(FencingChart.templateForKubeVersion("1.29.5")).as("without power fencing 1.25 is enough")
                .doesNotContain("ValidatingAdmissionPolicy");
    }

    @Test
    void strictLintWithPowerFencingOnHasNoErrorsOrWarnings() {
        LintResult result = FencingChart.lintWithValuesLines(Map.of(
                "    # below, which has the fence agents.\n    enabled: false",
                "    # below, which has the fence agents.\n    enabled: true"));

        assertThat(result.isFailed()).as("helm lint --strict failed: %s", result.getMessages()).isFalse();
        assertThat(result.getMessages()).noneMatch(m -> m.contains("[ERROR]") || m.contains("[WARNING]"));
    }

    @Test
    void enabledPassesTheFlagsAndInstallsTheGeneratedCrdsKeptOnUninstall() throws IOException {
        Rendered r = FencingChart.render("controller.powerFencing.enabled", true,
                "controller.powerFencing.fenceAgentsDir", "/opt/fence-agents/sbin",
                "controller.powerFencing.interval", "5s", "controller.powerFencing.recordRetention", "0");

        assertThat(r.args()).contains("--power-fencing", "--fence-agents-dir=/opt/fence-agents/sbin",
                "--power-fencing-interval=5s", "--node-fencing-retention=0", "--kdump-port=-1");
        assertThat(FencingChart.render("controller.powerFencing.enabled", true).args())
                .contains("--node-fencing-retention=720h");
        assertThatThrownBy(() -> FencingChart.render("controller.powerFencing.enabled", true,
                "controller.powerFencing.recordRetention", "30d")).hasMessageContaining("recordRetention");
        assertThat(r.all(Service.class)).noneMatch(svc -> svc.getMetadata().getName().endsWith("-kdump"));
        for (String name : CRDS) {
            CustomResourceDefinition crd = r.named(CustomResourceDefinition.class, name);
            CustomResourceDefinition want = FencingChart.parse(Files.readString(generated(name)),
                    CustomResourceDefinition.class);
            assertThat(crd.getSpec()).isEqualTo(want.getSpec());
            assertThat(crd.getMetadata().getAnnotations()).containsEntry("helm.sh/resource-policy", "keep");
        }
    }

    @Test
    void enabledRunsTheFenceAgentsImageWhoseAgentsAreInUsrSbin() {
        Rendered r = FencingChart.render("controller.powerFencing.enabled", true,
                "controller.image.pullPolicy", "Always");

        assertThat(r.controllerContainer().getImage()).isEqualTo(FENCE_AGENTS_IMAGE);
        assertThat(r.controllerContainer().getImagePullPolicy()).isEqualTo("Always");
        assertThat(r.args()).contains("--fence-agents-dir=/usr/sbin");
    }

    @Test
    void theFenceAgentsImageCanBeReplacedOrPinnedOrDroppedForTheControllerImage() {
        Rendered own = FencingChart.render("controller.powerFencing.enabled", true,
                "controller.powerFencing.image.repository", "registry.local/nmc-fence",
                "controller.powerFencing.image.tag", "v2");
        Rendered pinned = FencingChart.render("controller.powerFencing.enabled", true,
                "controller.powerFencing.image.digest", "sha256:" + "ab".repeat(32));
        Rendered controllerImage = FencingChart.render("controller.powerFencing.enabled", true,
                "controller.powerFencing.image.repository", "", "controller.image.repository", "registry.local/nmc");

        assertThat(own.controllerContainer().getImage()).isEqualTo("registry.local/nmc-fence:v2");
        assertThat(pinned.controllerContainer().getImage())
                .isEqualTo("ghcr.io/fencing/node-manager-controller-fence-agents@sha256:" + "ab".repeat(32));
        assertThat(controllerImage.controllerContainer().getImage()).isEqualTo("registry.local/nmc:0.1.0");
    }

    @Test
    void theFenceAgentsImageIsNotUsedWithoutPowerFencing() {
        Rendered r = FencingChart.render("controller.powerFencing.image.repository", "registry.local/nmc-fence");

        assertThat(r.controllerContainer().getImage()).isEqualTo("ghcr.io/fencing/node-manager-controller:0.1.0");
    }

    @Test
    void kdumpAddsTheUdpPortAndItsService() {
        Rendered r = FencingChart.render("controller.powerFencing.enabled", true,
                "controller.powerFencing.kdump.enabled", true, "controller.powerFencing.kdump.port", 17410);

        assertThat(r.args()).contains("--kdump-port=17410");
        assertThat(r.controllerContainer().getPorts()).filteredOn(p -> "kdump".equals(p.getName()))
                .singleElement().satisfies(p -> {
                    assertThat(p.getContainerPort()).isEqualTo(17410);
                    // A kdump kernel reaches node addresses only.
                    assertThat(p.getHostPort()).isEqualTo(17410);
                    assertThat(p.getProtocol()).isEqualTo("UDP");
                });
        Service svc = r.all(Service.class).stream().filter(s -> s.getMetadata().getName().endsWith("-kdump"))
                .findFirst().orElseThrow();
        assertThat(svc.getSpec().getPorts()).singleElement().satisfies(p -> {
            assertThat(p.getPort()).isEqualTo(17410);
            assertThat(p.getProtocol()).isEqualTo("UDP");
            assertThat(p.getTargetPort().getStrVal()).isEqualTo("kdump");
        });
    }

    @Test
    void kdumpWithoutHostPortListensOnThePodAddressOnly() {
        Rendered r = FencingChart.render("controller.powerFencing.enabled", true,
                "controller.powerFencing.kdump.enabled", true, "controller.powerFencing.kdump.hostPort", false);

        assertThat(r.controllerContainer().getPorts()).filteredOn(p -> "kdump".equals(p.getName()))
                .singleElement().satisfies(p -> {
                    assertThat(p.getContainerPort()).isEqualTo(7410);
                    assertThat(p.getHostPort()).isNull();
                });
    }

    @Test
    void kdumpWithoutPowerFencingRendersNothing() {
        Rendered r = FencingChart.render("controller.powerFencing.kdump.enabled", true);

        assertThat(r.args()).noneMatch(a -> a.startsWith("--kdump-port"));
        assertThat(r.controllerContainer().getPorts()).noneMatch(p -> "kdump".equals(p.getName()));
        assertThat(r.all(Service.class)).noneMatch(svc -> svc.getMetadata().getName().endsWith("-kdump"));
    }

    @Test
    void theChartsCrdCopiesAreIdenticalToTheGeneratedOnes() throws IOException {
        for (String name : CRDS) {
            Optional<String> problem = CrdCopyCheck.problem(FencingChart.dir().resolve("crds-fencing")
                    .resolve(name + "-v1.yml"), generated(name));
            assertThat(problem).as(problem.orElse("")).isEmpty();
        }
    }

    @Test
    void enabledGrantsTheRecordsAndSecretReadsInTheNamedNamespacesOnly() {
        Rendered r = FencingChart.render("controller.powerFencing.enabled", true,
                "controller.powerFencing.secretNamespaces[0]", "bmc-credentials",
                "controller.powerFencing.secretNamespaces[1]", FencingChart.NAMESPACE);

        List<PolicyRule> rules = r.all(ClusterRole.class).stream().flatMap(c -> c.getRules().stream()).toList();
        assertThat(rules).anySatisfy(rule -> {
            assertThat(rule.getResources()).containsExactly("nodefencings/status");
            assertThat(rule.getVerbs()).contains("update");
        });
        assertThat(rules).anySatisfy(rule -> {
            assertThat(rule.getResources()).containsExactly("nodefencings");
            // delete: closed records past --node-fencing-retention
            assertThat(rule.getVerbs()).contains("create", "list", "delete");
        });
        assertThat(rules).anySatisfy(rule -> {
            assertThat(rule.getResources()).containsExactly("nodefencingconfigs");
            assertThat(rule.getVerbs()).containsExactly("get", "list", "watch");
        });
        assertThat(rules).noneMatch(rule -> rule.getResources().contains("secrets"));
        List<Role> secretRoles = r.all(Role.class).stream()
                .filter(role -> role.getMetadata().getName().endsWith("-fence-secrets")).toList();
        assertThat(secretRoles).singleElement().satisfies(role -> {
            assertThat(role.getMetadata().getNamespace()).isEqualTo("bmc-credentials");
            assertThat(role.getRules()).singleElement().satisfies(rule -> {
                assertThat(rule.getResources()).containsExactly("secrets");
                assertThat(rule.getVerbs()).containsExactly("get");
            });
        });
        assertThat(r.all(RoleBinding.class)).filteredOn(b -> b.getMetadata().getName().endsWith("-fence-secrets"))
                .singleElement().satisfies(b -> assertThat(b.getMetadata().getNamespace())
                        .isEqualTo("bmc-credentials"));
    }
}
