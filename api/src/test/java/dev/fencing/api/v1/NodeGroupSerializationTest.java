package dev.fencing.api.v1;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.PolicyResolver;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeGroupSerializationTest {

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    @Test
    void deckhouseSpecFieldsThisModelDoesNotKnowSurviveARoundTrip() {
        NodeGroup ng = SERIALIZATION.unmarshal("""
                apiVersion: deckhouse.io/v1
                kind: NodeGroup
                metadata: {name: workers}
                spec:
                  nodeType: CloudEphemeral
                  cloudInstances: {minPerZone: 1, maxPerZone: 3}
                  disruptions: {approvalMode: Automatic}
                  fencing: {mode: Notify}
                """, NodeGroup.class);
        assertThat(ng.getSpec().additionalProperties()).containsOnlyKeys("cloudInstances", "disruptions");
        NodeGroup again = SERIALIZATION.unmarshal(SERIALIZATION.asYaml(ng), NodeGroup.class);
        assertThat(again.getSpec()).isEqualTo(ng.getSpec());
        assertThat(SERIALIZATION.asJson(ng)).contains("\"cloudInstances\":{\"minPerZone\":1,\"maxPerZone\":3}");
    }

    @Test
    void statusShowsEveryDerivedTimingUnderItsCrdName() {
        NodeGroup ng = new NodeGroup();
        ng.getMetadata().setName("workers");
        ng.setStatus(new NodeGroupStatus()
                .withObservedGeneration(2L)
                .withExpected(3)
                .withQuorumSize(2)
                .withHeard(3)
                .withArmed(3)
                .withMode("Watchdog")
                .withConditions(List.of(new ConditionBuilder().withType("Ready").withStatus("True")
                        .withReason("AgentsArmed").withMessage("3 of 3 agents armed").withObservedGeneration(2L)
                        .withLastTransitionTime("2026-11-22T10:00:00Z").build()))
                .withFencedNodes(List.of(new FencedNode().withName("worker-2").withFencedAt("2026-11-22T10:01:08Z")
                        .withReason("QuorumLost")))
                .withTimings(ResolvedTimingsStatus.from(PolicyResolver.resolve(FencingSpec.DEFAULTS, 3).timings())));
        @SuppressWarnings("unchecked")
        Map<String, Object> status = (Map<String, Object>) SERIALIZATION.convertValue(ng, Map.class).get("status");
        @SuppressWarnings("unchecked")
        Map<String, Object> timings = (Map<String, Object>) status.get("timings");
        assertThat(timings).containsEntry("profile", "Auto(n=3)")
                .containsEntry("tStop", "3.1s")
                .containsEntry("safeToAssumeFencedDelay", "1m8.1s")
                .containsEntry("quorumWindow", "2s")
                .containsEntry("feedInterval", "5s")
                .hasSize(19);
        NodeGroup again = SERIALIZATION.unmarshal(SERIALIZATION.asJson(ng), NodeGroup.class);
        assertThat(again.getStatus()).isEqualTo(ng.getStatus());
    }
}
