package dev.fencing.nodemanager.rbac;

import com.marcnuri.helm.Helm;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The chart's RBAC objects as {@code helm template} renders them (Helm's own Go library through helm-java, default
 * values), and their rules granted to a test user on a real API server. The chart directory comes from the
 * {@code chart.dir} system property the pom sets.
 */
public final class ChartRoles {

    private ChartRoles() {
    }

    /** Every object the chart renders for a release {@code fencing} in {@code namespace}. */
    static List<HasMetadata> render(String namespace) {
        Path chart = Path.of(System.getProperty("chart.dir", "../helm/fencing")).toAbsolutePath();
        String yaml = new Helm(chart).template().withName("fencing").withNamespace(namespace)
                .withKubeVersion("1.30.0").call();
        KubernetesSerialization serialization = new KubernetesSerialization();
        List<HasMetadata> objects = new ArrayList<>();
        for (String doc : yaml.split("(?m)^---\\s*$")) {
            if (!doc.isBlank() && doc.contains("kind:")) {
                Object parsed = serialization.unmarshal(doc);
                if (parsed instanceof HasMetadata h) {
                    objects.add(h);
                }
            }
        }
        return objects;
    }

    /**
     * Creates the chart's ClusterRole and Roles for a release in {@code namespace} under names prefixed with
     * {@code prefix} (several tests share one API server), and binds each to {@code user} instead of the chart's
     * ServiceAccount: that user then holds exactly the controller's privileges as installed.
     *
     * @return the names of the objects created (for the log)
     */
    public static List<String> grant(KubernetesClient admin, String namespace, String prefix, String user) {
        List<String> created = new ArrayList<>();
        for (HasMetadata o : render(namespace)) {
            if (o instanceof ClusterRole role) {
                String name = prefix + "-" + role.getMetadata().getName();
                role.getMetadata().setName(name);
                role.getMetadata().setResourceVersion(null);
                admin.resource(role).create();
                admin.resource(new ClusterRoleBindingBuilder().withNewMetadata().withName(name).endMetadata()
                        .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", name)
                        .addNewSubject().withApiGroup("rbac.authorization.k8s.io").withKind("User").withName(user)
                        .endSubject().build()).create();
                created.add("ClusterRole " + name);
            } else if (o instanceof Role role) {
                String ns = role.getMetadata().getNamespace() == null ? namespace : role.getMetadata().getNamespace();
                String name = prefix + "-" + role.getMetadata().getName();
                role.getMetadata().setName(name);
                role.getMetadata().setNamespace(ns);
                admin.resource(role).create();
                admin.resource(new RoleBindingBuilder().withNewMetadata().withName(name).withNamespace(ns)
                        .endMetadata()
                        .withNewRoleRef("rbac.authorization.k8s.io", "Role", name)
                        .addNewSubject().withApiGroup("rbac.authorization.k8s.io").withKind("User").withName(user)
                        .endSubject().build()).create();
                created.add("Role " + ns + "/" + name);
            }
        }
        if (created.isEmpty()) {
            throw new IllegalStateException("the chart rendered no ClusterRole or Role (rbac.create off?)");
        }
        return created;
    }
}
