package dev.fencing.nodemanager.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.nodemanager.status.NodeGroupStatusTarget.Decision;
import dev.fencing.nodemanager.status.NodeGroupStatusTarget.Mode;
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.nodemanager.testing.NodeGroupCrds;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import org.junit.jupiter.api.Test;

/** Where group status goes: only to a NodeGroup CRD that keeps every field this controller writes. */
@CrudMockClient
class NodeGroupStatusTargetTest {

    KubernetesMockServer server;
    KubernetesClient client;

    @Test
    void theProjectsOwnCrdKeepsEveryStatusField() {
        assertThat(NodeGroupStatusTarget.notKept(NodeGroupCrds.own(client))).isEmpty();
        assertThat(NodeGroupStatusTarget.decide(NodeGroupCrds.own(client)).write()).isTrue();
    }

    @Test
    void aCrdWhoseOwnerDefinesTheStatusKeepsNoneOfOursSoNothingIsWritten() {
        assertThat(NodeGroupStatusTarget.notKept(NodeGroupCrds.platformDefined(client))).containsExactlyInAnyOrder(
                "status.observedGeneration", "status.mode", "status.expected", "status.quorumSize", "status.heard",
                "status.armed", "status.fencedNodes", "status.timings", "status.conditions[].reason",
                "status.conditions[].observedGeneration");
        Decision d = NodeGroupStatusTarget.decide(NodeGroupCrds.platformDefined(client));
        assertThat(d.write()).isFalse();
        assertThat(d.reason()).contains("does not keep status.observedGeneration").contains("its owner defines");
    }

    @Test
    void aStatusThatKeepsUnknownFieldsKeepsOurs() {
        CustomResourceDefinition crd = NodeGroupCrds.platformDefined(client);
        crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getProperties().get("status")
                .setXKubernetesPreserveUnknownFields(true);
        assertThat(NodeGroupStatusTarget.notKept(crd)).isEmpty();
    }

    @Test
    void aCrdWithoutTheVersionWeUseKeepsNothing() {
        CustomResourceDefinition crd = NodeGroupCrds.own(client);
        crd.getSpec().getVersions().forEach(v -> v.setName("v2"));
        assertThat(NodeGroupStatusTarget.notKept(crd)).containsExactly("version v1 with a schema");
    }

    @Test
    void autoReadsTheInstalledCrd() {
        client.apiextensions().v1().customResourceDefinitions().resource(NodeGroupCrds.platformDefined(client)).create();
        assertThat(NodeGroupStatusTarget.decide(Mode.AUTO, client).write()).isFalse();
        client.apiextensions().v1().customResourceDefinitions().withName(NodeGroupStatusTarget.CRD).delete();
        client.apiextensions().v1().customResourceDefinitions().resource(NodeGroupCrds.own(client)).create();
        assertThat(NodeGroupStatusTarget.decide(Mode.AUTO, client).write()).isTrue();
    }

    @Test
    void autoWritesWhenTheCrdCannotBeReadAsBeforeThisCheck() {
        assertThat(NodeGroupStatusTarget.decide(Mode.AUTO, client))
                .isEqualTo(new Decision(true, "the CRD nodegroups.deckhouse.io is not installed"));
        server.expect().get().withPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                + NodeGroupStatusTarget.CRD).andReturn(403, new StatusBuilder().withCode(403)
                .withReason("Forbidden").withMessage("forbidden").build()).once();
        Decision forbidden = NodeGroupStatusTarget.decide(Mode.AUTO, client);
        assertThat(forbidden.write()).isTrue();
        assertThat(forbidden.reason()).contains("HTTP 403");
    }

    /**
     * An API server that does not answer (5xx, 429, no connection) says nothing about the CRD: the start retries and
     * then fails rather than write status where the platform owns it.
     */
    @Test
    void autoRetriesATransientFailureAndFailsTheStartWhenItLasts() {
        client.apiextensions().v1().customResourceDefinitions().resource(NodeGroupCrds.platformDefined(client))
                .create();
        String path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + NodeGroupStatusTarget.CRD;
        // Without the client's own retries, so that each 503 reaches decide().
        KubernetesClient once = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(
                new io.fabric8.kubernetes.client.ConfigBuilder(client.getConfiguration())
                        .withRequestRetryBackoffLimit(0).build()).build();
        server.expect().get().withPath(path).andReturn(503, new StatusBuilder().withCode(503)
                .withMessage("etcd leader changed").build()).times(2);
        assertThat(NodeGroupStatusTarget.decide(Mode.AUTO, once, java.time.Duration.ofMillis(10)).write())
                .as("read at the third attempt: the platform's CRD").isFalse();

        server.expect().get().withPath(path).andReturn(503, new StatusBuilder().withCode(503)
                .withMessage("etcd leader changed").build()).times(NodeGroupStatusTarget.AUTO_ATTEMPTS);
        assertThatThrownBy(() -> NodeGroupStatusTarget.decide(Mode.AUTO, once, java.time.Duration.ofMillis(10)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot read the CRD nodegroups.deckhouse.io (HTTP 503")
                .hasMessageContaining("after 5 attempts");
    }

    @Test
    void writeAndOffNeedNoCrd() {
        assertThat(NodeGroupStatusTarget.decide(Mode.WRITE, client).write()).isTrue();
        assertThat(NodeGroupStatusTarget.decide(Mode.OFF, client).write()).isFalse();
    }

    @Test
    void theModeIsAutoWriteOrOffInAnyCase() {
        assertThat(Mode.parse(" Off ")).isEqualTo(Mode.OFF);
        assertThat(Mode.parse("write")).isEqualTo(Mode.WRITE);
        assertThat(Mode.parse("AUTO")).isEqualTo(Mode.AUTO);
        assertThatThrownBy(() -> Mode.parse("yes")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--nodegroup-status must be auto, write or off, not \"yes\"");
    }
}
