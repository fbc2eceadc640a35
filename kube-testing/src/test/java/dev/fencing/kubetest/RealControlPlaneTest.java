package dev.fencing.kubetest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The fixture against the real binaries: authentication, authorization and tokens behave as in a cluster. */
class RealControlPlaneTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.apiServerOnly();

    @Test
    void adminSeesTheBootstrappedApi() {
        KubernetesClient admin = KUBE.get().adminClient();
        assertThat(admin.namespaces().withName("default").get()).isNotNull();
        assertThat(admin.rbac().clusterRoles().withName("system:node").get()).isNotNull();
        assertThat(admin.getKubernetesVersion().getGitVersion()).startsWith("v1.");
    }

    @Test
    void anUnboundUserIsForbiddenByRbac() {
        try (KubernetesClient nobody = KUBE.get().clientAs("nobody", "some-team")) {
            assertThatThrownBy(() -> nobody.secrets().inNamespace("default").list())
                    .isInstanceOf(KubernetesClientException.class)
                    .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403))
                    .hasMessageContaining("User \"nobody\" cannot list resource \"secrets\"");
        }
    }

    @Test
    void aNodeIdentityIsLimitedByTheNodeAuthorizer() {
        try (KubernetesClient node = KUBE.get().clientAs("system:node:n1", "system:nodes")) {
            assertThatThrownBy(() -> node.secrets().inNamespace("default").withName("anything").get())
                    .isInstanceOf(KubernetesClientException.class)
                    .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));
        }
    }

    @Test
    void serviceAccountTokensAreReviewedForTheirAudience() {
        RealControlPlane kube = KUBE.get();
        String ns = kube.uniqueName("tokens");
        KubernetesClient admin = kube.adminClient();
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                .create();
        admin.serviceAccounts().inNamespace(ns).resource(new ServiceAccountBuilder().withNewMetadata()
                .withName("agent").endMetadata().build()).create();

        String token = kube.requestToken(ns, "agent", List.of("fencing-agent"), Duration.ofMinutes(10), null, null);
        TokenReview right = admin.tokenReviews().create(new TokenReviewBuilder().withNewSpec().withToken(token)
                .withAudiences("fencing-agent").endSpec().build());
        assertThat(right.getStatus().getAuthenticated()).isTrue();
        assertThat(right.getStatus().getUser().getUsername()).isEqualTo("system:serviceaccount:" + ns + ":agent");

        TokenReview wrongAudience = admin.tokenReviews().create(new TokenReviewBuilder().withNewSpec()
                .withToken(token).withAudiences("someone-else").endSpec().build());
        assertThat(wrongAudience.getStatus().getAuthenticated()).isNotEqualTo(Boolean.TRUE);

        // an agent-audience token is not an API credential: the API server only accepts its own audience
        try (KubernetesClient sa = kube.serviceAccountClient(ns, "agent")) {
            assertThatThrownBy(() -> sa.pods().inNamespace(ns).list())
                    .isInstanceOf(KubernetesClientException.class)
                    .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));
        }
    }
}
