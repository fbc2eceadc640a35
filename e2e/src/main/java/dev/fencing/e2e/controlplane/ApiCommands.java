package dev.fencing.e2e.controlplane;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencing.api.v1.NodeGroup;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The operations the lab performs on the mock API server, as one JSON object per command (written to the
 * {@link MockApiServer}'s stdin, because the server lives in the control-plane namespace where the test JVM cannot
 * connect). Every command carries an {@code id}; the answer is {@code {"event":"done","id":…}} (with {@code object}
 * for {@code get}) or {@code {"event":"failed","id":…,"reason":…}}.
 *
 * <ul>
 *   <li>{@code create} {@code manifest}: a YAML or JSON object (Node, NodeGroup, …) is created;</li>
 *   <li>{@code annotate} / {@code label} {@code kind} (Node | NodeGroup), {@code name}, {@code key},
 *       {@code value} (null removes it);</li>
 *   <li>{@code get} {@code kind}, {@code name}: the object as stored;</li>
 *   <li>{@code agent-token} {@code namespace}, {@code group}, {@code node}, {@code file}: what the DaemonSet
 *       controller and the kubelet do for an agent: a pod of the group's agent DaemonSet (created by the
 *       controller; failed while it does not exist yet) bound to the node, and its projected token written to
 *       {@code file} (0600).</li>
 * </ul>
 */
final class ApiCommands {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final KubernetesClient client;
    private final LabTokenAuthority tokens;

    ApiCommands(KubernetesClient client, LabTokenAuthority tokens) {
        this.client = client;
        this.tokens = tokens;
    }

    /** @return the answer line for one command line; never throws on bad input */
    String handle(String line) {
        JsonNode command;
        try {
            command = JSON.readTree(line);
        } catch (JsonProcessingException e) {
            return failed(null, "not a JSON object: " + e.getOriginalMessage());
        }
        if (command == null || !command.isObject()) {
            return failed(null, "a command is one JSON object per line");
        }
        JsonNode id = command.get("id");
        try {
            String op = command.path("op").asText("");
            return switch (op) {
                case "create" -> create(id, text(command, "manifest"));
                case "annotate" -> edit(id, command, true);
                case "label" -> edit(id, command, false);
                case "get" -> get(id, command);
                case "agent-token" -> agentToken(id, command);
                default -> failed(id, "unknown op '" + op + "'; ops are create, annotate, label, get, agent-token");
            };
        } catch (RuntimeException | java.io.IOException e) {
            // a bad manifest surfaces as whatever fabric8's parser throws; the answer names it, the server lives on
            return failed(id, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    private String create(JsonNode id, String manifest) {
        HasMetadata object = client.getKubernetesSerialization().unmarshal(manifest);
        if ("NodeGroup".equals(object.getKind())) {
            // the generic path would need API discovery for the CRD; the typed class knows its plural
            object = client.getKubernetesSerialization().unmarshal(manifest, NodeGroup.class);
        }
        client.resource(object).create();
        return done(id);
    }

    private String edit(JsonNode id, JsonNode command, boolean annotation) {
        String key = text(command, "key");
        JsonNode value = command.get("value");
        String newValue = value == null || value.isNull() ? null : value.asText();
        resource(command).edit(object -> {
            ObjectMeta meta = object.getMetadata();
            Map<String, String> entries = new LinkedHashMap<>(
                    Objects.requireNonNullElse(annotation ? meta.getAnnotations() : meta.getLabels(), Map.of()));
            if (newValue == null) {
                entries.remove(key);
            } else {
                entries.put(key, newValue);
            }
            if (annotation) {
                meta.setAnnotations(entries);
            } else {
                meta.setLabels(entries);
            }
            return object;
        });
        return done(id);
    }

    private String get(JsonNode id, JsonNode command) throws JsonProcessingException {
        HasMetadata object = resource(command).get();
        ObjectNode answer = JSON.createObjectNode();
        answer.put("event", "done");
        answer.set("id", id);
        answer.set("object", object == null ? null
                : JSON.readTree(client.getKubernetesSerialization().asJson(object)));
        return answer.toString();
    }

    private String agentToken(JsonNode id, JsonNode command) throws java.io.IOException {
        String namespace = text(command, "namespace");
        String node = text(command, "node");
        String daemonSet = "fencing-agent-" + text(command, "group");
        java.nio.file.Path file = java.nio.file.Path.of(text(command, "file"));
        io.fabric8.kubernetes.api.model.apps.DaemonSet ds =
                client.apps().daemonSets().inNamespace(namespace).withName(daemonSet).get();
        if (ds == null) {
            return failed(id, "DaemonSet " + namespace + "/" + daemonSet + " does not exist (yet)");
        }
        String podName = daemonSet + "-" + node;
        io.fabric8.kubernetes.api.model.Pod pod = client.pods().inNamespace(namespace).withName(podName).get();
        if (pod == null) {
            pod = client.pods().inNamespace(namespace).resource(new io.fabric8.kubernetes.api.model.PodBuilder()
                    .withNewMetadata().withName(podName).withNamespace(namespace)
                        .addNewOwnerReference().withApiVersion("apps/v1").withKind("DaemonSet").withName(daemonSet)
                            .withUid(ds.getMetadata().getUid()).withController(true).endOwnerReference()
                    .endMetadata()
                    .withNewSpec().withNodeName(node).withServiceAccountName("fencing-agent").endSpec()
                    .build()).create();
        }
        String token = tokens.issue(new LabTokenAuthority.Claims(namespace, "fencing-agent", podName,
                pod.getMetadata().getUid(), node, java.time.Instant.now().plus(java.time.Duration.ofHours(2))));
        java.nio.file.Files.createDirectories(file.getParent());
        java.nio.file.Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        java.nio.file.Files.writeString(tmp, token);
        java.nio.file.Files.setPosixFilePermissions(tmp,
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        java.nio.file.Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        return done(id);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Resource<HasMetadata> resource(JsonNode command) {
        String kind = text(command, "kind");
        String name = text(command, "name");
        return switch (kind) {
            case "Node" -> (Resource) client.nodes().withName(name);
            case "NodeGroup" -> (Resource) client.resources(NodeGroup.class).withName(name);
            default -> throw new IllegalArgumentException("kind must be Node or NodeGroup, got '" + kind + "'");
        };
    }

    private static String text(JsonNode command, String field) {
        JsonNode value = command.get(field);
        if (value == null || !value.isTextual() || value.asText().isBlank()) {
            throw new IllegalArgumentException("field '" + field + "' (a non-empty string) is missing");
        }
        return value.asText();
    }

    private static String done(JsonNode id) {
        ObjectNode answer = JSON.createObjectNode();
        answer.put("event", "done");
        answer.set("id", id);
        return answer.toString();
    }

    static String failed(JsonNode id, String reason) {
        ObjectNode answer = JSON.createObjectNode();
        answer.put("event", "failed");
        answer.set("id", id);
        answer.put("reason", reason);
        return answer.toString();
    }
}
