package dev.fencing.nodemanager.rbac;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
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
    // Role rules by the Role's namespace; RELEASE for the release namespace (the chart's own or none given).
    private final java.util.Map<String, List<PolicyRule>> namespaceRules = new java.util.HashMap<>();
    private static final String RELEASE = "";
    private static final String CHART_NAMESPACE = "fencing-system";

    private ChartRbac(List<HasMetadata> objects) {
        for (HasMetadata o : objects) {
            if (o instanceof ClusterRole r && r.getRules() != null) {
                clusterRules.addAll(r.getRules());
            } else if (o instanceof Role r && r.getRules() != null) {
                String ns = r.getMetadata().getNamespace();
                String key = ns == null || ns.equals(CHART_NAMESPACE) ? RELEASE : ns;
                namespaceRules.computeIfAbsent(key, k -> new ArrayList<>()).addAll(r.getRules());
            }
        }
    }

    /** Renders the chart with its default values. */
    static ChartRbac render() {
        return new ChartRbac(ChartRoles.render(CHART_NAMESPACE));
    }

    /**
     * The calls no rule allows. Calls in {@code releaseNamespace} may use the release namespace's Roles too, calls in
     * another namespace the Roles the chart puts there (e.g. kube-node-lease); cluster-scoped ones only the
     * ClusterRole's.
     */
    List<ApiCall> uncovered(Iterable<ApiCall> calls, String releaseNamespace) {
        List<ApiCall> missing = new ArrayList<>();
        for (ApiCall call : calls) {
            if (BASIC_USER.contains(call.apiGroup() + "/" + call.resource())) {
                continue;
            }
            String key = call.namespace() == null ? null
                    : releaseNamespace.equals(call.namespace()) ? RELEASE : call.namespace();
            boolean allowed = clusterRules.stream().anyMatch(r -> allows(r, call))
                    || (key != null && namespaceRules.getOrDefault(key, List.of()).stream()
                            .anyMatch(r -> allows(r, call)));
            if (!allowed && !missing.contains(call)) {
                missing.add(call);
            }
        }
        return missing;
    }

    private static boolean allows(PolicyRule rule, ApiCall call) {
        // A rule that names objects allows only calls on those (never a list, watch or create).
        boolean named = rule.getResourceNames() == null || rule.getResourceNames().isEmpty()
                || rule.getResourceNames().contains(call.name());
        return matches(rule.getApiGroups(), call.apiGroup()) && matches(rule.getResources(), call.rbacResource())
                && matches(rule.getVerbs(), call.verb()) && named;
    }

    private static boolean matches(List<String> values, String value) {
        return values != null && (values.contains("*") || values.contains(value));
    }
}
