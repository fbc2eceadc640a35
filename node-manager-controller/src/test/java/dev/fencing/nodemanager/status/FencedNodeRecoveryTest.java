package dev.fencing.nodemanager.status;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FencedNodeRecoveryTest {

    private static final NodeFacts DOWN = new NodeFacts(false, false, null);
    private static final NodeFacts TAINTED_DOWN = new NodeFacts(true, false, null);
    private static final NodeFacts TAINTED_READY = new NodeFacts(true, true, null);

    @Test
    void aFencedNodeIsTaintedOutOfServiceWithinTheStormLimit() {
        FencedNodeRecovery.Plan plan = FencedNodeRecovery.plan(Set.of("b", "c"),
                Map.of("a", new NodeFacts(false, true, null), "b", DOWN, "c", DOWN), Set.of("a"), true, true, 1);
        assertThat(plan.actions()).containsExactly(new FencedNodeRecovery.Action("b", true));
        assertThat(plan.events()).extracting(GroupEvent::reason).containsExactly("OutOfServiceAdded");
    }

    @Test
    void theStormLimitCountsNodesAlreadyTainted() {
        FencedNodeRecovery.Plan plan = FencedNodeRecovery.plan(Set.of("b", "c"),
                Map.of("b", TAINTED_DOWN, "c", DOWN), Set.of(), true, true, 1);
        assertThat(plan.actions()).isEmpty();
        assertThat(FencedNodeRecovery.plan(Set.of("b", "c"), Map.of("b", TAINTED_DOWN, "c", DOWN), Set.of(), true,
                true, 2).actions()).containsExactly(new FencedNodeRecovery.Action("c", true));
    }

    @Test
    void theTaintGoesOnlyWhenTheNodeIsReadyAndItsAgentReportsAgain() {
        assertThat(FencedNodeRecovery.plan(Set.of(), Map.of("b", TAINTED_READY), Set.of(), true, true, 1)
                .actions()).isEmpty();
        assertThat(FencedNodeRecovery.plan(Set.of(), Map.of("b", TAINTED_DOWN), Set.of("b"), true, true, 1)
                .actions()).isEmpty();
        FencedNodeRecovery.Plan back = FencedNodeRecovery.plan(Set.of(), Map.of("b", TAINTED_READY), Set.of("b"),
                true, true, 1);
        assertThat(back.actions()).containsExactly(new FencedNodeRecovery.Action("b", false));
        assertThat(back.events()).extracting(GroupEvent::reason).containsExactly("OutOfServiceRemoved");
    }

    @Test
    void aGroupThatDoesNotFenceNeverTaintsButStillReleasesReturningNodes() {
        assertThat(FencedNodeRecovery.plan(Set.of("b"), Map.of("b", DOWN), Set.of(), true, false, 1).actions())
                .isEmpty();
        assertThat(FencedNodeRecovery.plan(Set.of(), Map.of("b", TAINTED_READY), Set.of("b"), true, false, 1)
                .actions()).containsExactly(new FencedNodeRecovery.Action("b", false));
    }

    @Test
    void zeroDisablesTaintingAndFencingOffReleasesReadyNodes() {
        assertThat(FencedNodeRecovery.plan(Set.of("b"), Map.of("b", DOWN), Set.of(), true, true, 0).actions())
                .isEmpty();
        assertThat(FencedNodeRecovery.plan(Set.of(), Map.of("b", TAINTED_READY), Set.of(), false, true, 1).actions())
                .containsExactly(new FencedNodeRecovery.Action("b", false));
        assertThat(FencedNodeRecovery.plan(Set.of(), Map.of("b", TAINTED_DOWN), Set.of(), false, true, 1).actions())
                .isEmpty();
    }
}
