package dev.fencing.kubetest;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaPropsBuilder;
import java.util.Map;

/**
 * A NodeGroup CRD whose status a platform that owns the NodeGroup defines for itself, as Deckhouse's does: its own
 * counters and conditions of type, status, message and lastTransitionTime, nothing else kept. The controller tests
 * and the chart tests install it to see the controller keep its status elsewhere.
 */
public final class PlatformDefinedStatus {

    private PlatformDefinedStatus() {
    }

    /** {@code crd} (this project's NodeGroup CRD) with its v1 status schema replaced by the platform's; in place. */
    public static CustomResourceDefinition apply(CustomResourceDefinition crd) {
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
}
