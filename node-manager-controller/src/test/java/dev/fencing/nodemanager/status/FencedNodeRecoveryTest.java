package dev.fencing.nodemanager.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.policy.AfterFence;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FencedNodeRecoveryTest {

    private static final NodeFacts DOWN = new NodeFacts(false, false, null);
    private static final NodeFacts TAINTED_DOWN = new NodeFacts(true, false, null);
    private static final NodeFacts TAINTED_READY = new NodeFacts(true, true, null);

    private static List<String> plan(Set<String> fenced, Map<String, NodeFacts> nodes, Set<String> reporting,
                                     boolean fencingEnabled, boolean fencesNodes, int max, AfterFence after) {
        return FencedNodeRecovery.plan(fenced, nodes, reporting, fencingEnabled, fencesNodes, max, after).actions()
                .stream().map(a -> a.node() + " " + a.kind() + " " + a.event().reason()).toList();
    }

    private static List<String> plan(Set<String> fenced, Map<String, NodeFacts> nodes, Set<String> reporting,
                                     boolean fencingEnabled, boolean fencesNodes, int max) {
        return plan(fenced, nodes, reporting, fencingEnabled, fencesNodes, max, AfterFence.TAINT);
    }

    @Test
    void aFencedNodeIsTaintedOutOfServiceWithinTheStormLimit() {
        assertThat(plan(Set.of("b", "c"), Map.of("a", new NodeFacts(false, true, null), "b", DOWN, "c", DOWN),
                Set.of("a"), true, true, 1)).containsExactly("b ADD_TAINT OutOfServiceAdded");
    }

    /**
     * An out-of-service taint someone else put (an administrator following Kubernetes' non-graceful shutdown, another
     * tool) is neither replaced nor claimed, and never removed by us once the node is back.
     */
    @Test
    void someoneElsesTaintIsNeitherReplacedNorClaimedNorRemoved() {
        NodeFacts theirsDown = new NodeFacts(false, false, null, true);
        NodeFacts theirsReady = new NodeFacts(false, true, null, true);
        assertThat(plan(Set.of("b"), Map.of("b", theirsDown), Set.of(), true, true, 1)).isEmpty();
        assertThat(plan(Set.of(), Map.of("b", theirsReady), Set.of("b"), true, true, 1)).isEmpty();
        assertThat(NodeFacts.of(new io.fabric8.kubernetes.api.model.NodeBuilder().withNewMetadata().withName("b")
                .endMetadata().withNewSpec().addNewTaint().withKey(NodeFacts.OUT_OF_SERVICE_TAINT)
                .withValue("nodeshutdown").withEffect("NoExecute").endTaint().endSpec().build(), null))
                .isEqualTo(theirsDown);
    }

    @Test
    void theStormLimitCountsNodesAlreadyTainted() {
        assertThat(plan(Set.of("b", "c"), Map.of("b", TAINTED_DOWN, "c", DOWN), Set.of(), true, true, 1)).isEmpty();
        assertThat(plan(Set.of("b", "c"), Map.of("b", TAINTED_DOWN, "c", DOWN), Set.of(), true, true, 2))
                .containsExactly("c ADD_TAINT OutOfServiceAdded");
    }

    @Test
    void theTaintGoesOnlyWhenTheNodeIsReadyAndItsAgentReportsAgain() {
        assertThat(plan(Set.of(), Map.of("b", TAINTED_READY), Set.of(), true, true, 1)).isEmpty();
        assertThat(plan(Set.of(), Map.of("b", TAINTED_DOWN), Set.of("b"), true, true, 1)).isEmpty();
        assertThat(plan(Set.of(), Map.of("b", TAINTED_READY), Set.of("b"), true, true, 1))
                .containsExactly("b REMOVE_TAINT OutOfServiceRemoved");
    }

    @Test
    void aGroupThatDoesNotFenceNeverTaintsButStillReleasesReturningNodes() {
        assertThat(plan(Set.of("b"), Map.of("b", DOWN), Set.of(), true, false, 1)).isEmpty();
        assertThat(plan(Set.of(), Map.of("b", TAINTED_READY), Set.of("b"), true, false, 1))
                .containsExactly("b REMOVE_TAINT OutOfServiceRemoved");
    }

    @Test
    void zeroDisablesTaintingAndFencingOffReleasesReadyNodes() {
        assertThat(plan(Set.of("b"), Map.of("b", DOWN), Set.of(), true, true, 0)).isEmpty();
        assertThat(plan(Set.of(), Map.of("b", TAINTED_READY), Set.of(), false, true, 1))
                .containsExactly("b REMOVE_TAINT OutOfServiceRemoved");
        assertThat(plan(Set.of(), Map.of("b", TAINTED_DOWN), Set.of(), false, true, 1)).isEmpty();
    }

    @Test
    void aFencedNodeOfAGroupWhoseMachinesAreRecreatedIsDeletedNotTainted() {
        assertThat(plan(Set.of("b", "c"), Map.of("a", new NodeFacts(false, true, null), "b", DOWN, "c", DOWN),
                Set.of("a"), true, true, 1, AfterFence.DELETE_NODE))
                .containsExactly("b DELETE_NODE NodeDeleted", "c DELETE_NODE NodeDeleted");
        assertThat(plan(Set.of("b"), Map.of("b", DOWN), Set.of(), true, false, 1, AfterFence.DELETE_NODE))
                .as("Exclude/Wait groups never delete").isEmpty();
    }
}
