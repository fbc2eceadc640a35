package dev.fencing.nodemanager.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.nodemanager.status.NodeGroupStatusTarget.Decision;
import dev.fencing.nodemanager.status.NodeGroupStatusTarget.Mode;
import dev.fencing.nodemanager.testing.CrudMockClient;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaPropsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Where group status goes: only to a NodeGroup CRD that keeps every field this controller writes. */
@CrudMockClient
public class NodeGroupStatusTargetTest {

    KubernetesMockServer server;
    KubernetesClient client;

    /** The CRD this project ships (api/crds), as generated from the API classes. */
    public static CustomResourceDefinition ownCrd(KubernetesClient client) throws IOException {
        try (InputStream in = NodeGroupStatusTargetTest.class
                .getResourceAsStream("/META-INF/fabric8/nodegroups.deckhouse.io-v1.yml")) {
            return client.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
        }
    }

    /**
     * The same CRD with the status a platform that owns the NodeGroup defines for itself, as Deckhouse's does: its own
     * counters and conditions of type, status, message and lastTransitionTime, nothing else kept.
     */
    public static CustomResourceDefinition platformCrd(KubernetesClient client) throws IOException {
        CustomResourceDefinition crd = ownCrd(client);
        JSONSchemaProps text = new JSONSchemaPropsBuilder().withType("string").build();
        JSONSchemaProps condition = new JSONSchemaPropsBuilder().withType("object").withProperties(Map.of(
                "type", text, "status", text, "message", text, "lastTransitionTime", text)).build();
        JSONSchemaProps status = new JSONSchemaPropsBuilder().withType("object").withProperties(Map.of(
                "ready", new JSONSchemaPropsBuilder().withType("integer").build(),
                "nodes", new JSONSchemaPropsBuilder().withType("integer").build(),
                "conditions", new JSONSchemaPropsBuilder().withType("array").withNewItems().withSchema(condition)
                        .endItems().build())).build();
        crd.getSpec().getVersions().stream().filter(v -> v.getName().equals("v1")).findFirst().orElseThrow()
                .getSchema().getOpenAPIV3Schema().getProperties().put("status", status);
        return crd;
    }

    @Test
    void theProjectsOwnCrdKeepsEveryStatusField() throws IOException {
        assertThat(NodeGroupStatusTarget.notKept(ownCrd(client))).isEmpty();
        assertThat(NodeGroupStatusTarget.decide(ownCrd(client)).write()).isTrue();
    }

    @Test
    void aCrdWhoseOwnerDefinesTheStatusKeepsNoneOfOursSoNothingIsWritten() throws IOException {
        assertThat(NodeGroupStatusTarget.notKept(platformCrd(client))).containsExactlyInAnyOrder(
                "status.observedGeneration", "status.mode", "status.expected", "status.quorumSize", "status.heard",
                "status.armed", "status.fencedNodes", "status.timings", "status.conditions[].reason",
                "status.conditions[].observedGeneration");
        Decision d = NodeGroupStatusTarget.decide(platformCrd(client));
        assertThat(d.write()).isFalse();
        assertThat(d.reason()).contains("does not keep status.observedGeneration").contains("its owner defines");
    }

    @Test
    void aStatusThatKeepsUnknownFieldsKeepsOurs() throws IOException {
        CustomResourceDefinition crd = platformCrd(client);
        crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getProperties().get("status")
                .setXKubernetesPreserveUnknownFields(true);
        assertThat(NodeGroupStatusTarget.notKept(crd)).isEmpty();
    }

    @Test
    void aCrdWithoutTheVersionWeUseKeepsNothing() throws IOException {
        CustomResourceDefinition crd = ownCrd(client);
        crd.getSpec().getVersions().forEach(v -> v.setName("v2"));
        assertThat(NodeGroupStatusTarget.notKept(crd)).containsExactly("version v1 with a schema");
    }

    @Test
    void autoReadsTheInstalledCrd() throws IOException {
        client.apiextensions().v1().customResourceDefinitions().resource(platformCrd(client)).create();
        assertThat(NodeGroupStatusTarget.decide(Mode.AUTO, client).write()).isFalse();
        client.apiextensions().v1().customResourceDefinitions().withName(NodeGroupStatusTarget.CRD).delete();
        client.apiextensions().v1().customResourceDefinitions().resource(ownCrd(client)).create();
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
