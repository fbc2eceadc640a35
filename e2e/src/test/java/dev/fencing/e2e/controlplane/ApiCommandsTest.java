package dev.fencing.e2e.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.netns.LabNode;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.InputStream;
import java.net.InetAddress;
import java.util.HashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The mock API server's command protocol, against an in-process CRUD mock like the one {@link MockApiServer} runs. */
class ApiCommandsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final LabNode NODE = new LabNode("node-1", 0, "fe2e-test-0", "198.18.0.10");

    private KubernetesMockServer server;
    private KubernetesClient client;
    private ApiCommands commands;
    private final LabTokenAuthority tokens = new LabTokenAuthority();
    @org.junit.jupiter.api.io.TempDir
    java.nio.file.Path dir;

    @BeforeEach
    void startServer() throws Exception {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                tokens.dispatcher(new io.fabric8.kubernetes.client.utils.KubernetesSerialization()), false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        client = server.createClient();
        try (InputStream crd = getClass().getResourceAsStream(MockApiServer.CRD_RESOURCE)) {
            client.apiextensions().v1().customResourceDefinitions()
                    .resource(client.getKubernetesSerialization().unmarshal(crd, CustomResourceDefinition.class))
                    .create();
        }
        commands = new ApiCommands(client, tokens);
    }

    @AfterEach
    void stopServer() {
        client.close();
        server.destroy();
    }

    private JsonNode send(ObjectNode command) throws Exception {
        return JSON.readTree(commands.handle(command.toString()));
    }

    private static ObjectNode command(long id, String op) {
        ObjectNode command = JSON.createObjectNode();
        command.put("id", id);
        command.put("op", op);
        return command;
    }

    @Test
    void seededNodeGroupAndNodeAreWhatTheControllerReads() throws Exception {
        AgentSettings settings = AgentSettings.fastFence();
        JsonNode group = send(command(1, "create").put("manifest", ControlPlane.nodeGroupYaml("workers", settings)));
        JsonNode node = send(command(2, "create").put("manifest", ControlPlane.nodeYaml(NODE, "workers")));

        assertThat(group.path("event").asText()).isEqualTo("done");
        assertThat(node.path("id").asLong()).isEqualTo(2);
        NodeGroup stored = client.resources(NodeGroup.class).withName("workers").get();
        assertThat(stored.getSpec().getFencing().getWatchdog().getTimeout()).isEqualTo("6s");
        assertThat(stored.getSpec().getFencing().getQuorumLossAction()).isEqualTo("Fence");
        assertThat(stored.getSpec().getFencing().getTimings().getQuorumWindow()).isEqualTo("1500ms");
        Node storedNode = client.nodes().withName("node-1").get();
        assertThat(storedNode.getMetadata().getLabels()).containsEntry(ControlPlane.GROUP_LABEL, "workers");
        assertThat(storedNode.getStatus().getAddresses())
                .anySatisfy(a -> assertThat(a.getType() + "=" + a.getAddress()).isEqualTo("InternalIP=198.18.0.10"));
    }

    @Test
    void annotationsAndLabelsAreSetAndRemoved() throws Exception {
        send(command(1, "create").put("manifest", ControlPlane.nodeYaml(NODE, "workers")));

        send(command(2, "annotate").put("kind", "Node").put("name", "node-1")
                .put("key", ControlPlane.MAINTENANCE_ANNOTATION).put("value", "kernel upgrade"));
        assertThat(client.nodes().withName("node-1").get().getMetadata().getAnnotations())
                .containsEntry(ControlPlane.MAINTENANCE_ANNOTATION, "kernel upgrade");

        send(command(3, "annotate").put("kind", "Node").put("name", "node-1")
                .put("key", ControlPlane.MAINTENANCE_ANNOTATION).putNull("value"));
        assertThat(client.nodes().withName("node-1").get().getMetadata().getAnnotations())
                .doesNotContainKey(ControlPlane.MAINTENANCE_ANNOTATION);

        JsonNode removed = send(command(4, "label").put("kind", "Node").put("name", "node-1")
                .put("key", ControlPlane.GROUP_LABEL).putNull("value"));
        assertThat(removed.path("event").asText()).isEqualTo("done");
        assertThat(client.nodes().withName("node-1").get().getMetadata().getLabels())
                .doesNotContainKey(ControlPlane.GROUP_LABEL);
    }

    @Test
    void getReturnsTheStoredObject() throws Exception {
        send(command(1, "create").put("manifest", ControlPlane.nodeGroupYaml("workers", AgentSettings.fastFence())));

        JsonNode answer = send(command(2, "get").put("kind", "NodeGroup").put("name", "workers"));

        assertThat(answer.path("object").path("spec").path("fencing").path("mode").asText()).isEqualTo("Watchdog");
        assertThat(answer.path("object").path("metadata").path("name").asText()).isEqualTo("workers");
    }

    @Test
    void badCommandsAreAnsweredWithWhatWasWrong() throws Exception {
        assertThat(JSON.readTree(commands.handle("not json")).path("reason").asText()).contains("not a JSON object");
        assertThat(send(command(1, "explode")).path("reason").asText()).contains("unknown op 'explode'");
        assertThat(send(command(2, "annotate").put("kind", "Pod").put("name", "x").put("key", "k"))
                .path("reason").asText()).contains("kind must be Node or NodeGroup");
        assertThat(send(command(3, "label").put("kind", "Node").put("name", "x")).path("reason").asText())
                .contains("field 'key'");
        assertThat(send(command(5, "create").put("manifest", "kind: [unclosed")).path("event").asText())
                .isEqualTo("failed");
        JsonNode missing = send(command(4, "annotate").put("kind", "Node").put("name", "no-such-node")
                .put("key", "k").put("value", "v"));
        assertThat(missing.path("event").asText()).isEqualTo("failed");
        assertThat(missing.path("id").asLong()).isEqualTo(4);
    }

    @Test
    void anAgentTokenIsIssuedForAPodOfTheGroupsDaemonSetAndOnlyItPassesTheTokenReview() throws Exception {
        ObjectNode issue = command(1, "agent-token").put("namespace", "fencing-system").put("group", "workers")
                .put("node", "node-1").put("file", dir.resolve("node-1/token").toString());
        assertThat(send(issue).path("reason").asText()).contains("does not exist (yet)");

        client.apps().daemonSets().inNamespace("fencing-system").resource(new io.fabric8.kubernetes.api.model.apps
                .DaemonSetBuilder().withNewMetadata().withName("fencing-agent-workers").withNamespace("fencing-system")
                .endMetadata().build()).create();
        assertThat(send(issue.put("id", 2)).path("event").asText()).isEqualTo("done");

        String token = java.nio.file.Files.readString(dir.resolve("node-1/token"));
        assertThat(java.nio.file.Files.getPosixFilePermissions(dir.resolve("node-1/token")))
                .containsExactlyInAnyOrder(java.nio.file.attribute.PosixFilePermission.OWNER_READ,
                        java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
        var pod = client.pods().inNamespace("fencing-system").withName("fencing-agent-workers-node-1").get();
        assertThat(pod.getSpec().getNodeName()).isEqualTo("node-1");
        assertThat(pod.getMetadata().getOwnerReferences().get(0).getName()).isEqualTo("fencing-agent-workers");

        var review = client.authentication().v1().tokenReviews().create(new io.fabric8.kubernetes.api.model
                .authentication.TokenReviewBuilder().withNewSpec().withToken(token).withAudiences("fencing-agent")
                .endSpec().build());
        assertThat(review.getStatus().getAuthenticated()).isTrue();
        assertThat(review.getStatus().getUser().getExtra().get("authentication.kubernetes.io/pod-uid"))
                .containsExactly(pod.getMetadata().getUid());
        var forged = client.authentication().v1().tokenReviews().create(new io.fabric8.kubernetes.api.model
                .authentication.TokenReviewBuilder().withNewSpec().withToken(token + "x")
                .withAudiences("fencing-agent").endSpec().build());
        assertThat(forged.getStatus().getAuthenticated()).isFalse();
    }
}
