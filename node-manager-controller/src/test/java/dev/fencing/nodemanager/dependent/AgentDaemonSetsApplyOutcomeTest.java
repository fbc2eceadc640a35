package dev.fencing.nodemanager.dependent;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * How a server-side apply's result is classified: a write whose only effect is managedFields bookkeeping (seen on a
 * real API server when another manager's entry has the same second as the controller's) is not an update.
 */
class AgentDaemonSetsApplyOutcomeTest {

    private static DaemonSet daemonSet(String resourceVersion, UnaryOperator<DaemonSetBuilder> edit) {
        return edit.apply(new DaemonSetBuilder().withNewMetadata().withName("fencing-agent-g").withNamespace("ns")
                .withResourceVersion(resourceVersion).withGeneration(3L).addToLabels("app", "fencing-agent")
                .addToAnnotations("hash", "abc").withOwnerReferences(new OwnerReferenceBuilder().withKind("NodeGroup")
                        .withName("g").withUid("u1").withController(true).build())
                .endMetadata()).build();
    }

    @Test
    void theSameResourceVersionIsUnchanged() {
        assertThat(AgentDaemonSets.changedByApply(daemonSet("10", b -> b), daemonSet("10", b -> b))).isFalse();
    }

    @Test
    void aNewResourceVersionWithTheSameGenerationLabelsAnnotationsAndOwnersIsUnchanged() {
        DaemonSet after = daemonSet("11", b -> b.editMetadata().addNewManagedField().withManager("other-tool")
                .withOperation("Apply").endManagedField().endMetadata());
        assertThat(AgentDaemonSets.changedByApply(daemonSet("10", b -> b), after)).isFalse();
    }

    @Test
    void aNewGenerationIsAChange() {
        assertThat(AgentDaemonSets.changedByApply(daemonSet("10", b -> b),
                daemonSet("11", b -> b.editMetadata().withGeneration(4L).endMetadata()))).isTrue();
    }

    @Test
    void changedLabelsAnnotationsOrOwnersAreChanges() {
        DaemonSet before = daemonSet("10", b -> b);
        assertThat(AgentDaemonSets.changedByApply(before,
                daemonSet("11", b -> b.editMetadata().addToLabels("tier", "x").endMetadata()))).isTrue();
        assertThat(AgentDaemonSets.changedByApply(before,
                daemonSet("11", b -> b.editMetadata().addToAnnotations("hash", "def").endMetadata()))).isTrue();
        assertThat(AgentDaemonSets.changedByApply(before,
                daemonSet("11", b -> b.editMetadata().withOwnerReferences().endMetadata()))).isTrue();
    }

    @Test
    void withoutAGenerationAnyWriteCountsAsAChange() {
        DaemonSet before = daemonSet("10", b -> b.editMetadata().withGeneration(null).endMetadata());
        assertThat(AgentDaemonSets.changedByApply(before,
                daemonSet("11", b -> b.editMetadata().withGeneration(null).endMetadata()))).isTrue();
    }
}
