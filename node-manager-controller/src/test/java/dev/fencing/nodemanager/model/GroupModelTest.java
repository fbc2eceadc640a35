package dev.fencing.nodemanager.model;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.Mode;
import dev.fencing.policy.QuorumLossAction;
import dev.fencing.policy.Violation;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class GroupModelTest {

    private static GroupSpecView spec(FencingSpec fencing) {
        return new GroupSpecView("workers", 3, fencing, List.of());
    }

    @Test
    void expectedMembersAreTheNodesLabelledIntoTheGroupSortedWithAddressesAndGossipAddress() {
        GroupModel model = GroupModel.from(spec(FencingSpec.DEFAULTS),
                List.of(node("w-2", "workers", 2), node("w-1", "workers", 1), node("m-1", "masters", 9)), 7946);

        assertThat(model.expected().keySet()).containsExactly("w-1", "w-2");
        GroupMember w1 = model.expected().get("w-1");
        assertThat(w1.gossipAddress()).isEqualTo("198.18.0.1:7946");
        assertThat(w1.addresses()).containsEntry("InternalIP", "198.18.0.1").containsEntry("Hostname", "w-1");
        assertThat(model.signals()).doesNotContainKey("m-1");
    }

    /** A Node without a usable address yet is not an expected member (it gets one later), but gets its signals. */
    @Test
    void aNodeWithoutAnAddressYetIsNotExpectedUntilItHasOne() {
        Node bare = new NodeBuilder().withNewMetadata().withName("w-3").addToLabels(NodeLabels.GROUP, "workers")
                .endMetadata().build();
        GroupModel model = GroupModel.from(spec(FencingSpec.DEFAULTS), List.of(node("w-1", "workers", 1),
                node("w-2", "workers", 2), bare), 7946);
        assertThat(model.expected()).containsOnlyKeys("w-1", "w-2");
        assertThat(model.signals()).containsKey("w-3");
        Node addressed = new NodeBuilder(bare).withNewStatus().addNewAddress().withType("InternalIP")
                .withAddress("198.18.0.3").endAddress().endStatus().build();
        assertThat(GroupModel.from(spec(FencingSpec.DEFAULTS), List.of(node("w-1", "workers", 1),
                node("w-2", "workers", 2), addressed), 7946).expected()).containsOnlyKeys("w-1", "w-2", "w-3");
    }

    @Test
    void gossipPortComesFromTheControllerConfigAndIpv6IsBracketed() {
        Node v6 = new NodeBuilder(node("w-1", "workers", 1)).editStatus().withAddresses()
                .addNewAddress().withType("InternalIP").withAddress("2001:db8::1").endAddress().endStatus().build();
        GroupModel model = GroupModel.from(spec(FencingSpec.DEFAULTS), List.of(v6), 8500);
        assertThat(model.expected().get("w-1").gossipAddress()).isEqualTo("[2001:db8::1]:8500");
    }

    @Test
    void anyMaintenanceAnnotationIsASignalNamingItsSourceButKeepsTheNodeExpected() {
        Node approved = new NodeBuilder(node("w-1", "workers", 1)).editMetadata()
                .addToAnnotations("update.node.deckhouse.io/approved", "").endMetadata().build();
        Node disabled = new NodeBuilder(node("w-2", "workers", 2)).editMetadata()
                .addToAnnotations("node-manager.deckhouse.io/fencing-disable", "kernel update").endMetadata().build();
        GroupModel model = GroupModel.from(spec(FencingSpec.DEFAULTS), List.of(approved, disabled,
                node("w-3", "workers", 3)), 7946);

        assertThat(model.signals().get("w-1").maintenanceSource()).isEqualTo("update.node.deckhouse.io/approved");
        assertThat(model.signals().get("w-2").maintenanceSource())
                .isEqualTo("node-manager.deckhouse.io/fencing-disable");
        assertThat(model.signals().get("w-2").maintenanceValue()).isEqualTo("kernel update");
        assertThat(model.signals().get("w-3")).isEqualTo(NodeSignal.NONE);
        assertThat(model.expected()).containsKeys("w-1", "w-2", "w-3");
    }

    @Test
    void disruptionApprovedWinsOverTheOtherAnnotationsAsTheReportedSource() {
        Node both = new NodeBuilder(node("w-1", "workers", 1)).editMetadata()
                .addToAnnotations("node-manager.deckhouse.io/fencing-disable", "")
                .addToAnnotations("update.node.deckhouse.io/disruption-approved", "").endMetadata().build();
        GroupModel model = GroupModel.from(spec(FencingSpec.DEFAULTS), List.of(both), 7946);
        assertThat(model.signals().get("w-1").maintenanceSource())
                .isEqualTo("update.node.deckhouse.io/disruption-approved");
    }

    @Test
    void aNodeWithDeletionTimestampIsBeingRemovedAndLeavesTheExpectedSet() {
        Node deleting = new NodeBuilder(node("w-1", "workers", 1)).editMetadata()
                .withDeletionTimestamp("2026-11-22T10:00:00Z").endMetadata().build();
        GroupModel model = GroupModel.from(spec(FencingSpec.DEFAULTS), List.of(deleting, node("w-2", "workers", 2),
                node("w-3", "workers", 3)), 7946);

        assertThat(model.expected().keySet()).containsExactly("w-2", "w-3");
        assertThat(model.signals().get("w-1").beingRemoved()).isTrue();
        assertThat(model.signals().get("w-1").removalReason()).contains("deletionTimestamp");
        assertThat(model.policy().expected()).isEqualTo(2);
    }

    @Test
    void aNodeNotInTheGroupIsSignalledAsLeavingIt() {
        GroupModel model = GroupModel.from(spec(FencingSpec.DEFAULTS), List.of(node("w-1", "workers", 1)), 7946);
        NodeSignal moved = model.signalFor("w-9");
        assertThat(moved.beingRemoved()).isTrue();
        assertThat(moved.removalReason()).contains(NodeLabels.GROUP).contains("workers");
    }

    @Test
    void policyAndEveryTimingAreResolvedForTheGroupSizeWithTStopAndSafeToAssumeFenced() {
        GroupModel model = GroupModel.from(spec(FencingSpec.DEFAULTS), List.of(node("w-1", "workers", 1),
                node("w-2", "workers", 2), node("w-3", "workers", 3)), 7946);

        assertThat(model.valid()).isTrue();
        assertThat(model.policy().quorumSize()).isEqualTo(2);
        assertThat(model.policy().mode()).isEqualTo(Mode.WATCHDOG);
        assertThat(model.policy().quorumLossAction()).isEqualTo(QuorumLossAction.FENCE);
        assertThat(model.policy().timings().watchdogTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(model.tStop()).isEqualTo(model.policy().timings().tStop());
        assertThat(model.safeToAssumeFencedDelay())
                .isEqualTo(model.tStop().plus(Duration.ofSeconds(60)).plus(model.policy().timings().fenceMargin()));
    }

    @Test
    void anInvalidSpecYieldsViolationsNamingTheFieldAndNoPolicy() {
        FencingSpec invalid = FencingSpec.DEFAULTS.withMode(Mode.NOTIFY).withQuorumLossAction(QuorumLossAction.FENCE);
        GroupModel model = GroupModel.from(spec(invalid), List.of(node("w-1", "workers", 1)), 7946);

        assertThat(model.valid()).isFalse();
        assertThat(model.violations()).extracting(Violation::field).contains("spec.fencing.quorumLossAction");
        assertThat(model.fencingEnabled()).isTrue();
    }

    @Test
    void mappingViolationsFromTheCrdAreKeptAndPreventResolution() {
        GroupSpecView view = new GroupSpecView("workers", 1, null,
                List.of(new Violation("spec.fencing.watchdog.timeout", "must match ^[0-9]+[smh]$")));
        GroupModel model = GroupModel.from(view, List.of(node("w-1", "workers", 1)), 7946);
        assertThat(model.fencingEnabled()).isTrue();
        assertThat(model.valid()).isFalse();
        assertThat(model.violations()).extracting(Violation::field).containsExactly("spec.fencing.watchdog.timeout");
    }

    @Test
    void fencingAbsentMeansDisabledWithoutPolicy() {
        GroupModel model = GroupModel.from(spec(null), List.of(node("w-1", "workers", 1)), 7946);
        assertThat(model.fencingEnabled()).isFalse();
        assertThat(model.policy()).isNull();
        assertThat(model.violations()).isEmpty();
    }
}
