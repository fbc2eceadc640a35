package dev.fencing.nodemanager.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The CRUD mock answers a patch it cannot apply at once, with the API server's 422; the stock mock leaves it
 * unanswered (the client then waits out its 10 s request timeout, and retries), which is what made an operator test
 * on it wait for the controller for 30 s.
 */
@CrudMockClient
class AnsweringCrudDispatcherTest {

    /** Well under the client's 10 s request timeout: an unanswered request cannot pass. */
    private static final Duration PROMPT = Duration.ofSeconds(5);

    KubernetesMockServer server;
    KubernetesClient client;

    @Test
    void theExtensionFillsTheServerAndClientFields() {
        assertThat(server).isNotNull();
        assertThat(client).isNotNull();
        assertThat(client.getMasterUrl().getPort()).isEqualTo(server.getPort());
    }

    @Test
    void aJsonPatchRemovingAnArrayIndexThatIsGoneGets422AndChangesNothing() {
        client.configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName("cm")
                .withNamespace("ns").withFinalizers("example.com/one").endMetadata().addToData("k", "v").build())
                .create();

        KubernetesClientException refused = assertTimeoutPreemptively(PROMPT, () -> catchThrowableOfType(
                KubernetesClientException.class, () -> client.configMaps().inNamespace("ns").withName("cm")
                        .patch(PatchContext.of(PatchType.JSON),
                                "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers/1\"}]")));

        assertThat(refused).isNotNull();
        assertThat(refused.getCode()).isEqualTo(422);
        assertThat(refused.getStatus().getReason()).isEqualTo("Invalid");
        ConfigMap now = client.configMaps().inNamespace("ns").withName("cm").get();
        assertThat(now.getMetadata().getFinalizers()).containsExactly("example.com/one");
        assertThat(now.getData()).containsEntry("k", "v");
    }

    /** What JOSDK sends without server-side apply: a status diff from a cached copy the server has moved past. */
    @Test
    void aStatusDiffFromAStaleCopyGets422AndTheNextFromAFreshCopyIsTaken() {
        NodeCondition a = new NodeConditionBuilder().withType("A").withStatus("True").build();
        NodeCondition b = new NodeConditionBuilder().withType("B").withStatus("True").build();
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("n1").endMetadata().build()).create();
        Node stale = client.nodes().withName("n1").editStatus(n -> new NodeBuilder(n).withNewStatus()
                .withConditions(a, b).endStatus().build());
        client.nodes().withName("n1").editStatus(n -> new NodeBuilder(n).editStatus().withConditions(b).endStatus()
                .build());

        KubernetesClientException refused = assertTimeoutPreemptively(PROMPT, () -> catchThrowableOfType(
                KubernetesClientException.class, () -> client.nodes().resource(withoutVersion(stale))
                        .editStatus(n -> new NodeBuilder(n).editStatus().withConditions(a).endStatus().build())));

        assertThat(refused).isNotNull();
        assertThat(refused.getCode()).isEqualTo(422);
        assertThat(client.nodes().withName("n1").get().getStatus().getConditions()).extracting(NodeCondition::getType)
                .containsExactly("B");
        Node fresh = client.nodes().withName("n1").get();
        client.nodes().resource(withoutVersion(fresh)).editStatus(n -> new NodeBuilder(n).editStatus()
                .withConditions(List.of()).endStatus().build());
        assertThat(client.nodes().withName("n1").get().getStatus().getConditions()).isEmpty();
    }

    // JOSDK clears the version before its diff: no optimistic lock, the patch is applied to whatever is stored.
    private static Node withoutVersion(Node node) {
        Node copy = new NodeBuilder(node).build();
        copy.getMetadata().setResourceVersion(null);
        return copy;
    }
}
