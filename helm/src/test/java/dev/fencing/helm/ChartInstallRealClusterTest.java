package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.marcnuri.helm.Release;
import dev.fencing.kubetest.RealControlPlaneExtension;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code helm install / upgrade / uninstall} of the chart through Helm's own library into a real kube-apiserver (with
 * the controller manager, so Deployments get ReplicaSets and Pods): the server accepts every rendered object (a strict
 * server-side dry run first: schema and unknown fields; then the install: admission), the generated TLS Secret survives upgrades and uninstall, cert-manager mode without cert-manager fails
 * with Helm's message naming the missing kinds. No kubelet: only API objects count.
 */
class ChartInstallRealClusterTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.withControllers();

    private static final String NAME = DefaultValuesRenderTest.NAME;

    private ChartRelease release(String prefix) {
        return new ChartRelease(KUBE.get(), KUBE.get().uniqueName(prefix));
    }

    private static KubernetesClient admin() {
        return KUBE.get().adminClient();
    }

    /** Every rendered object that the server does not hold, as Kind/name. */
    private static List<String> missingOnServer(ChartRelease release, List<HasMetadata> rendered) {
        List<String> missing = new ArrayList<>();
        for (HasMetadata o : rendered) {
            HasMetadata live = release.onServer(o);
            if (live == null || !"Helm".equals(live.getMetadata().getLabels().get("app.kubernetes.io/managed-by"))) {
                missing.add(o.getKind() + "/" + o.getMetadata().getName());
            }
        }
        return missing;
    }

    private static List<String> stillOnServer(ChartRelease release, List<HasMetadata> objects) {
        return objects.stream().filter(o -> release.onServer(o) != null)
                .map(o -> o.getKind() + "/" + o.getMetadata().getName()).toList();
    }

    @Test
    void theDefaultValuesInstallAndTheServerAcceptsEveryObjectAndTheControllerPods() {
        ChartRelease release = release("chart-default");
        List<HasMetadata> rendered = release.rendered();
        assertThat(release.strictDryRunRefusals(rendered)).isEmpty();

        Release installed = release.install();

        assertThat(installed.getStatus()).isEqualTo("deployed");
        assertThat(installed.getOutput()).as("the notes name the agents' host ports")
                .contains("open 9651 TCP+UDP (gossip)", "9652 TCP (/metrics, /healthz, /readyz)");
        assertThat(missingOnServer(release, rendered)).isEmpty();
        assertThat(rendered).extracting(HasMetadata::getKind).contains("Deployment", "Service", "ServiceAccount",
                "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "PodDisruptionBudget", "Secret");
        // Admission of the pods the Deployment stands for: their ServiceAccount exists, the priority class
        // system-cluster-critical is allowed in the release namespace, the security context passes.
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(admin().pods()
                .inNamespace(release.namespace()).withLabel("app.kubernetes.io/name", NAME).list().getItems())
                .hasSize(2)
                .allSatisfy(p -> assertThat(p.getSpec().getServiceAccountName()).isEqualTo(NAME)));

        release.uninstall();
        assertThat(stillOnServer(release, rendered)).containsExactly("Secret/" + NAME + "-tls");
    }

    @ParameterizedTest
    @ValueSource(strings = {"generated", "secret", "disabled"})
    void eachTlsModeThatNeedsNoCertManagerInstallsEveryObject(String mode) {
        ChartRelease release = release("chart-tls-" + mode.toLowerCase());
        String fullname = KUBE.get().uniqueName("nmc");
        Object[] values = mode.equals("secret")
                ? new Object[] {"fullnameOverride", fullname, "tls.mode", mode, "tls.secretName", "own-tls"}
                : new Object[] {"fullnameOverride", fullname, "tls.mode", mode};
        List<HasMetadata> rendered = release.rendered(values);
        assertThat(release.strictDryRunRefusals(rendered)).isEmpty();

        assertThat(release.install(values).getStatus()).isEqualTo("deployed");

        assertThat(missingOnServer(release, rendered)).isEmpty();
        List<String> secrets = rendered.stream().filter(Secret.class::isInstance)
                .map(o -> o.getMetadata().getName()).toList();
        assertThat(secrets).isEqualTo(mode.equals("generated") ? List.of(fullname + "-tls") : List.of());
        Deployment deployment = admin().apps().deployments().inNamespace(release.namespace()).withName(fullname)
                .get();
        List<String> args = deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs();
        if (mode.equals("disabled")) {
            assertThat(args).contains("--insecure-plaintext");
        } else {
            assertThat(args).contains("--agent-ca-secret=" + (mode.equals("secret") ? "own-tls" : fullname + "-tls"));
        }
        release.uninstall();
    }

    @Test
    void certManagerModeWithoutCertManagerFailsNamingTheMissingKindsAndCreatesNothing() {
        ChartRelease release = release("chart-cm");
        String fullname = KUBE.get().uniqueName("nmc");

        assertThatThrownBy(() -> release.install("fullnameOverride", fullname, "tls.mode", "certManager"))
                .hasMessageContaining("no matches for kind \"Certificate\" in version \"cert-manager.io/v1\"")
                .hasMessageContaining("no matches for kind \"Issuer\" in version \"cert-manager.io/v1\"")
                .hasMessageContaining("ensure CRDs are installed first");

        assertThat(admin().apps().deployments().inNamespace(release.namespace()).withName(fullname).get()).isNull();
        assertThat(admin().rbac().clusterRoles().withName(fullname).get()).isNull();
    }

    @Test
    void theOptionalCrdIsEstablishedAndKeptOnUninstallUnlessCrdsKeepIsOff() {
        ChartRelease kept = release("chart-crd-keep");
        kept.install("fullnameOverride", KUBE.get().uniqueName("nmc"), "crds.install", true);
        try {
            CustomResourceDefinition crd = ChartRelease.awaitCrdEstablished(admin());
            assertThat(crd.getMetadata().getAnnotations()).containsEntry("helm.sh/resource-policy", "keep");
            kept.uninstall();
            assertThat(admin().apiextensions().v1().customResourceDefinitions().withName(ChartRelease.CRD).get())
                    .as("kept on uninstall").isNotNull();
        } finally {
            ChartRelease.deleteCrd(admin());
        }

        ChartRelease dropped = release("chart-crd-drop");
        dropped.install("fullnameOverride", KUBE.get().uniqueName("nmc"), "crds.install", true, "crds.keep", false);
        try {
            ChartRelease.awaitCrdEstablished(admin());
            dropped.uninstall();
            await().atMost(Duration.ofSeconds(30)).until(() -> admin().apiextensions().v1()
                    .customResourceDefinitions().withName(ChartRelease.CRD).get() == null);
        } finally {
            ChartRelease.deleteCrd(admin());
        }
    }

    @Test
    void upgradesKeepTheGeneratedSecretUntilRegenerateAndUninstallLeavesOnlyIt() {
        ChartRelease release = release("chart-upgrade");
        String fullname = KUBE.get().uniqueName("nmc");
        String secretName = fullname + "-tls";
        List<HasMetadata> rendered = release.rendered("fullnameOverride", fullname);
        release.install("fullnameOverride", fullname);
        Map<String, String> installed = secretData(release, secretName);

        Release plain = release.upgrade("fullnameOverride", fullname, "controller.replicas", 3);
        assertThat(plain.getStatus()).isEqualTo("deployed");
        assertThat(admin().apps().deployments().inNamespace(release.namespace()).withName(fullname).get()
                .getSpec().getReplicas()).as("the upgrade applied").isEqualTo(3);
        assertThat(secretData(release, secretName)).as("a plain upgrade keeps the generated CA and certificate")
                .isEqualTo(installed);

        release.upgrade("fullnameOverride", fullname, "tls.generated.regenerate", true);
        Map<String, String> regenerated = secretData(release, secretName);
        assertThat(regenerated).containsOnlyKeys("ca.crt", "tls.crt", "tls.key");
        assertThat(regenerated.get("ca.crt")).as("regenerate=true issues a new CA").isNotEqualTo(installed.get("ca.crt"));
        assertThat(regenerated.get("tls.crt")).isNotEqualTo(installed.get("tls.crt"));

        release.upgrade("fullnameOverride", fullname);
        assertThat(secretData(release, secretName)).as("the next plain upgrade drops the Secret from the manifest "
                + "but keeps it").isEqualTo(regenerated);

        release.uninstall();
        assertThat(stillOnServer(release, rendered)).containsExactly("Secret/" + secretName);
        assertThat(secretData(release, secretName)).isEqualTo(regenerated);
    }

    private static Map<String, String> secretData(ChartRelease release, String name) {
        Secret secret = admin().secrets().inNamespace(release.namespace()).withName(name).get();
        assertThat(secret).as("Secret " + name).isNotNull();
        return secret.getData();
    }
}
