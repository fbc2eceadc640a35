package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The agents' ServiceAccount: the controller creates the agent DaemonSets in its own (the release) namespace with
 * {@code --agent-service-account}; without that ServiceAccount there the DaemonSets never get a pod.
 */
class AgentServiceAccountTest {

    @Test
    void theChartCreatesTheServiceAccountTheControllerPutsOnAgentPodsInTheReleaseNamespace() {
        Rendered r = FencingChart.render();

        String name = r.arg("--agent-service-account").orElseThrow();
        ServiceAccount sa = r.named(ServiceAccount.class, name);
        assertThat(name).isEqualTo("fencing-agent");
        assertThat(sa.getMetadata().getNamespace()).isEqualTo(FencingChart.NAMESPACE)
                .isEqualTo(r.arg("--namespace").orElseThrow());
        assertThat(sa.getAutomountServiceAccountToken()).isFalse();
    }

    @Test
    void noRoleIsBoundToTheAgentServiceAccount() {
        Rendered r = FencingChart.render();

        Stream<Subject> subjects = Stream.concat(
                r.all(ClusterRoleBinding.class).stream().flatMap(b -> b.getSubjects().stream()),
                r.all(RoleBinding.class).stream().flatMap(b -> b.getSubjects().stream()));
        assertThat(subjects).noneMatch(s -> s.getName().equals("fencing-agent"));
    }

    @Test
    void nameAndAnnotationsAreTakenFromValuesAndPassedToTheController() {
        Rendered r = FencingChart.render("agent.serviceAccount.name", "agents",
                "agent.serviceAccount.annotations.team", "storage");

        assertThat(r.arg("--agent-service-account")).hasValue("agents");
        assertThat(r.named(ServiceAccount.class, "agents").getMetadata().getAnnotations())
                .containsEntry("team", "storage");
    }

    @Test
    void anExistingAgentServiceAccountIsNamedButNotRendered() {
        Rendered r = FencingChart.render("agent.serviceAccount.create", false, "agent.serviceAccount.name", "pre");

        assertThat(r.all(ServiceAccount.class)).extracting(sa -> sa.getMetadata().getName())
                .doesNotContain("pre", "fencing-agent");
        assertThat(r.arg("--agent-service-account")).hasValue("pre");
    }

    @Test
    void anEmptyAgentServiceAccountNameIsRejected() {
        assertThatThrownBy(() -> FencingChart.render("agent.serviceAccount.name", ""))
                .hasMessageContaining("/agent/serviceAccount/name");
    }
}
