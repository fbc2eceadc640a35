package dev.fencing.nodemanager.rbac;

import com.marcnuri.helm.Helm;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The controller's privileges as the chart grants them: the ClusterRole and the release-namespace Role rendered by
 * {@code helm template} (Helm's own Go library through helm-java) with default values. The chart directory comes
 * from the {@code chart.dir} system property the pom sets.
 */
final class ChartRbac {

    /** Requests every authenticated user may make (the default {@code system:basic-user} ClusterRole). */
    private static final Set<String> BASIC_USER = Set.of("authorization.k8s.io/selfsubjectrulesreviews",
            "authorization.k8s.io/selfsubjectaccessreviews", "authentication.k8s.io/selfsubjectreviews");

    private final List<PolicyRule> clusterRules = new ArrayList<>();
    private final List<PolicyRule> namespaceRules = new ArrayList<>();

    private ChartRbac(List<HasMetadata> objects) {
        for (HasMetadata o : objects) {
            if (o instanceof ClusterRole r && r.getRules() != null) {
                clusterRules.addAll(r.getRules());
            } else if (o instanceof Role r && r.getRules() != null) {
                namespaceRules.addAll(r.getRules());
            }
        }
    }

    /** Renders the chart with its default values. */
    static ChartRbac render() {
        Path chart = Path.of(System.getProperty("chart.dir", "../helm/fencing")).toAbsolutePath();
        String yaml = new Helm(chart).template().withName("fencing").withNamespace("fencing-system")
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
        return new ChartRbac(objects);
    }

    /**
     * The calls no rule allows. Calls in {@code releaseNamespace} may use the Role's rules too; calls elsewhere (and
     * cluster-scoped ones) only the ClusterRole's.
     */
    List<ApiCall> uncovered(Iterable<ApiCall> calls, String releaseNamespace) {
        List<ApiCall> missing = new ArrayList<>();
        for (ApiCall call : calls) {
            if (BASIC_USER.contains(call.apiGroup() + "/" + call.resource())) {
                continue;
            }
            boolean allowed = clusterRules.stream().anyMatch(r -> allows(r, call))
                    || (releaseNamespace.equals(call.namespace())
                            && namespaceRules.stream().anyMatch(r -> allows(r, call)));
            if (!allowed && !missing.contains(call)) {
                missing.add(call);
            }
        }
        return missing;
    }

    private static boolean allows(PolicyRule rule, ApiCall call) {
        return matches(rule.getApiGroups(), call.apiGroup()) && matches(rule.getResources(), call.rbacResource())
                && matches(rule.getVerbs(), call.verb());
    }

    private static boolean matches(List<String> values, String value) {
        return values != null && (values.contains("*") || values.contains(value));
    }
}
