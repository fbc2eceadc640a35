package dev.fencing.e2e.controlplane;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The controller's identity exactly as the chart installs it: the ServiceAccounts (controller and agents), the
 * ClusterRole, Roles and their bindings, rendered by {@code helm template} (Helm's own library through helm-java)
 * from {@code helm/fencing} with default values, so a rule the chart lacks fails the lab as it would fail a
 * cluster.
 *
 * @param objects            the rendered ServiceAccounts and RBAC objects, in chart order
 * @param controllerAccount  the ServiceAccount the ClusterRoleBinding grants to (the controller's)
 * @param agentAccount       the agents' ServiceAccount ({@code --agent-service-account})
 */
record ChartIdentity(List<HasMetadata> objects, String controllerAccount, String agentAccount) {

    private static final Set<String> KINDS = Set.of("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
            "RoleBinding");

    ChartIdentity {
        objects = List.copyOf(objects);
    }

    /**
     * Renders the chart in {@code chartDir} as release {@code fencing} in {@code namespace} for the API server's
     * {@code kubeVersion} (e.g. {@code v1.37.2}; the chart checks it), with {@code values} set over the defaults
     * (e.g. {@code controller.powerFencing.enabled=true}, which adds the NodeFencing rules).
     */
    static ChartIdentity render(Path chartDir, String namespace, String kubeVersion, Map<String, Object> values) {
        if (!Files.isRegularFile(chartDir.resolve("Chart.yaml"))) {
            throw new IllegalStateException("no Helm chart at " + chartDir + " (the lab installs the controller's "
                    + "RBAC from helm/fencing)");
        }
        TemplateCommand template = new Helm(chartDir).template().withName("fencing").withNamespace(namespace)
                .withKubeVersion(kubeVersion);
        values.forEach(template::set);
        String yaml = template.call();
        KubernetesSerialization serialization = new KubernetesSerialization();
        List<HasMetadata> objects = new ArrayList<>();
        for (String doc : yaml.split("(?m)^---\\s*$")) {
            if (doc.isBlank() || !doc.contains("kind:")) {
                continue;
            }
            if (serialization.unmarshal(doc) instanceof HasMetadata object && KINDS.contains(object.getKind())) {
                objects.add(object);
            }
        }
        String controller = objects.stream().filter(ClusterRoleBinding.class::isInstance)
                .map(ClusterRoleBinding.class::cast).flatMap(b -> b.getSubjects().stream())
                .filter(s -> "ServiceAccount".equals(s.getKind())).map(Subject::getName).findFirst()
                .orElseThrow(() -> new IllegalStateException("the chart renders no ClusterRoleBinding to a "
                        + "ServiceAccount"));
        String agent = objects.stream().filter(o -> "ServiceAccount".equals(o.getKind()))
                .map(o -> o.getMetadata().getName()).filter(n -> !n.equals(controller)).findFirst()
                .orElseThrow(() -> new IllegalStateException("the chart renders no agent ServiceAccount"));
        return new ChartIdentity(objects, controller, agent);
    }

    /** Creates every object with {@code admin}. */
    void install(KubernetesClient admin) {
        for (HasMetadata object : objects) {
            admin.resource(object).create();
        }
    }
}
