package dev.fencing.nodemanager.status;

import dev.fencing.api.v1.NodeGroupStatus;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Whether this controller keeps a group's status in its NodeGroup's {@code status}. Only where the NodeGroup CRD
 * keeps the fields it writes: a CRD whose owner defines the status (Deckhouse's declares its own fields and
 * {@code conditions} without {@code reason}) prunes them on every write, and its owner writes {@code conditions}
 * itself, so writing there would only replace the owner's conditions with ours over and over. There the status
 * goes to a ConfigMap per group ({@link GroupStatusStore}).
 */
public final class NodeGroupStatusTarget {

    /** The CRD the NodeGroups come from. */
    public static final String CRD = "nodegroups.deckhouse.io";
    /** The version this controller reads and writes. */
    public static final String VERSION = "v1";

    /** {@code --nodegroup-status}. */
    public enum Mode {
        /** Write when the CRD keeps the fields (read from the CRD at start). */
        AUTO,
        /** Always write. */
        WRITE,
        /** Never write. */
        OFF;

        /** Parses auto / write / off, any case. */
        public static Mode parse(String value) {
            try {
                return valueOf(value.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--nodegroup-status must be auto, write or off, not \"" + value
                        + "\"", e);
            }
        }
    }

    /** Write or not, and why (logged at start). */
    public record Decision(boolean write, String reason) {
    }

    private NodeGroupStatusTarget() {
    }

    /** Reads of the CRD at start before a transient failure (no answer, 5xx, 429) ends the start. */
    static final int AUTO_ATTEMPTS = 5;
    static final java.time.Duration AUTO_RETRY_PAUSE = java.time.Duration.ofSeconds(2);

    /**
     * Decides for {@code mode}; AUTO reads the CRD through {@code client}. A refusal (401, 403: no right to read it)
     * falls back to writing, as before this check; a transient failure is retried {@value #AUTO_ATTEMPTS} times and
     * then ends the start with an {@link IllegalStateException}: on Deckhouse, writing by mistake would replace the
     * platform's conditions over and over until the next restart, and the status kept in ConfigMaps would go unread.
     */
    public static Decision decide(Mode mode, KubernetesClient client) {
        return decide(mode, client, AUTO_RETRY_PAUSE);
    }

    static Decision decide(Mode mode, KubernetesClient client, java.time.Duration pause) {
        return switch (mode) {
            case WRITE -> new Decision(true, "--nodegroup-status=write");
            case OFF -> new Decision(false, "--nodegroup-status=off");
            case AUTO -> {
                CustomResourceDefinition crd = null;
                for (int attempt = 1; ; attempt++) {
                    try {
                        crd = client.apiextensions().v1().customResourceDefinitions().withName(CRD).get();
                        break;
                    } catch (KubernetesClientException e) {
                        if (e.getCode() == 401 || e.getCode() == 403) {
                            yield new Decision(true, "cannot read the CRD " + CRD + " (HTTP " + e.getCode()
                                    + "), so its schema is not checked");
                        }
                        if (attempt >= AUTO_ATTEMPTS) {
                            throw new IllegalStateException("--nodegroup-status=auto: cannot read the CRD " + CRD
                                    + " (HTTP " + e.getCode() + ": " + e.getMessage() + ") after " + attempt
                                    + " attempts; not guessing where group status is kept (set --nodegroup-status"
                                    + " write or off to skip the check)", e);
                        }
                        pause(pause);
                    }
                }
                yield crd == null ? new Decision(true, "the CRD " + CRD + " is not installed")
                        : decide(crd);
            }
        };
    }

    private static void pause(java.time.Duration pause) {
        try {
            Thread.sleep(pause.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the CRD " + CRD, e);
        }
    }

    /**
     * Whether {@code status} is one this controller wrote: only it sets {@code observedGeneration}. A platform that
     * owns the NodeGroup status (its conditions) does not, and a CRD that would prune ours drops it.
     */
    public static boolean writtenByController(NodeGroupStatus status) {
        return status != null && status.getObservedGeneration() != null;
    }

    /** AUTO's answer for this CRD. */
    public static Decision decide(CustomResourceDefinition crd) {
        List<String> missing = notKept(crd);
        if (missing.isEmpty()) {
            return new Decision(true, "the CRD " + CRD + " " + VERSION + " keeps every status field");
        }
        return new Decision(false, "the CRD " + CRD + " " + VERSION + " does not keep " + String.join(", ", missing)
                + ": its owner defines the NodeGroup status");
    }

    /**
     * The status fields this controller writes that the CRD's {@value #VERSION} schema would prune, as paths
     * ({@code status.expected}, {@code status.conditions[].reason}); empty when it keeps them all.
     */
    public static List<String> notKept(CustomResourceDefinition crd) {
        Optional<JSONSchemaProps> root = crd.getSpec().getVersions().stream()
                .filter(v -> VERSION.equals(v.getName()))
                .map(CustomResourceDefinitionVersion::getSchema)
                .filter(s -> s != null && s.getOpenAPIV3Schema() != null)
                .map(s -> s.getOpenAPIV3Schema()).findFirst();
        List<String> missing = new ArrayList<>();
        if (root.isEmpty()) {
            missing.add("version " + VERSION + " with a schema");
            return missing;
        }
        if (keepsUnknown(root.get())) {
            return missing;
        }
        JSONSchemaProps status = properties(root.get()).get("status");
        if (status == null) {
            missing.add("status");
            return missing;
        }
        if (keepsUnknown(status)) {
            return missing;
        }
        Map<String, JSONSchemaProps> fields = properties(status);
        for (String name : statusFields()) {
            if (!fields.containsKey(name)) {
                missing.add("status." + name);
            }
        }
        JSONSchemaProps conditions = fields.get("conditions");
        JSONSchemaProps item = conditions == null || conditions.getItems() == null ? null
                : conditions.getItems().getSchema();
        if (item != null && !keepsUnknown(item)) {
            for (String name : List.of("reason", "observedGeneration")) {
                if (!properties(item).containsKey(name)) {
                    missing.add("status.conditions[]." + name);
                }
            }
        }
        return missing;
    }

    // The JSON names of NodeGroupStatus: its fields (the CRD is generated from them).
    private static List<String> statusFields() {
        List<String> names = new ArrayList<>();
        for (Field f : NodeGroupStatus.class.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers())) {
                names.add(f.getName());
            }
        }
        return names;
    }

    private static boolean keepsUnknown(JSONSchemaProps p) {
        return Boolean.TRUE.equals(p.getXKubernetesPreserveUnknownFields());
    }

    private static Map<String, JSONSchemaProps> properties(JSONSchemaProps p) {
        return p.getProperties() == null ? Map.of() : p.getProperties();
    }
}
