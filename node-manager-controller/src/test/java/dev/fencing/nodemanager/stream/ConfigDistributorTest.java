package dev.fencing.nodemanager.stream;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.model.GroupSpecView;
import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.GossipLabel;
import dev.fencing.proto.nodemanager.v1.ApiServerProbe;
import dev.fencing.proto.nodemanager.v1.ConfigDelta;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import io.fabric8.kubernetes.api.model.Node;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConfigDistributorTest {

    private static GroupModel model(List<Node> nodes) {
        return GroupModel.from(new GroupSpecView("g", 1, FencingSpec.DEFAULTS, List.of()), nodes, 7946);
    }

    private static final class RecordingSink implements ConfigSink {
        final List<ControllerMessage> sent = new ArrayList<>();
        final String node;
        Status closed;

        RecordingSink(String node) {
            this.node = node;
        }

        @Override
        public String node() {
            return node;
        }

        @Override
        public boolean send(ControllerMessage message) {
            sent.add(message);
            return closed == null;
        }

        @Override
        public void close(Status status) {
            closed = status;
        }
    }

    @Test
    void everyFullConfigCarriesTheApiServerProbe() {
        ApiServerProbe probe = ApiServerProbe.newBuilder().setUrl("https://198.18.0.1:6443")
                .setCaBundlePem(ByteString.copyFromUtf8("-----BEGIN CERTIFICATE-----")).build();
        ConfigDistributor d = new ConfigDistributor("e", 3, false, probe);
        d.publish(model(List.of(node("a", "g", 1), node("b", "g", 2))));
        RecordingSink sink = new RecordingSink("b");
        d.subscribe("g", sink, "", 0).orElseThrow();
        assertThat(sink.sent.get(0).getFull().getApiServerProbe()).isEqualTo(probe);
        RecordingSink without = new RecordingSink("a");
        ConfigDistributor none = new ConfigDistributor("e", 3);
        none.publish(model(List.of(node("a", "g", 1))));
        none.subscribe("g", without, "", 0).orElseThrow();
        assertThat(without.sent.get(0).getFull().hasApiServerProbe()).isFalse();
    }

    @Test
    void anAgentWhoseRevisionFellOutOfTheBoundedHistoryGetsAFullConfig() {
        ConfigDistributor d = new ConfigDistributor("e", 3);
        List<Node> nodes = new ArrayList<>(List.of(node("a", "g", 1), node("b", "g", 2)));
        d.publish(model(nodes));
        RecordingSink first = new RecordingSink("a");
        d.subscribe("g", first, "", 0).orElseThrow().cancel();
        long held = first.sent.get(0).getRevision();
        for (int i = 3; i <= 6; i++) {
            nodes.add(node("n" + i, "g", i));
            d.publish(model(nodes));
        }
        RecordingSink again = new RecordingSink("a");
        d.subscribe("g", again, "e", held).orElseThrow();
        assertThat(again.sent).hasSize(1);
        assertThat(again.sent.get(0).hasFull()).isTrue();
        assertThat(again.sent.get(0).getFull().getMembersCount()).isEqualTo(6);
    }

    @Test
    void aGrowingGroupSendsTheNewMemberAndTheResizedPolicyButNoOtherMembers() {
        ConfigDistributor d = new ConfigDistributor("e", 100);
        List<Node> nodes = new ArrayList<>(List.of(node("a", "g", 1), node("b", "g", 2)));
        d.publish(model(nodes));
        RecordingSink sink = new RecordingSink("a");
        d.subscribe("g", sink, "", 0).orElseThrow();
        nodes.add(node("c", "g", 3));
        List<ConfigChange> changes = d.publish(model(nodes));

        assertThat(changes).extracting(c -> c.delta().getChangeCase()).containsExactlyInAnyOrder(
                ConfigDelta.ChangeCase.MEMBER_UPSERTED, ConfigDelta.ChangeCase.SIGNALS,
                ConfigDelta.ChangeCase.POLICY);
        // a receives the member and the policy (quorum 2 of 3 replaces 2 of 2), not c's signals.
        List<ControllerMessage> deltas = sink.sent.subList(1, sink.sent.size());
        assertThat(deltas).extracting(m -> m.getDelta().getChangeCase()).containsExactly(
                ConfigDelta.ChangeCase.MEMBER_UPSERTED, ConfigDelta.ChangeCase.POLICY);
        assertThat(deltas.get(0).getDelta().getBaseRevision()).isEqualTo(sink.sent.get(0).getRevision());
        assertThat(deltas.get(1).getDelta().getBaseRevision()).isEqualTo(deltas.get(0).getRevision());
    }

    /** A distributor serving a group of four (a mutable list) and the agent of a subscribed to it. */
    private record FourMembers(ConfigDistributor distributor, List<Node> nodes, RecordingSink sink) {
    }

    private static FourMembers fourMembersWithAgentA() {
        ConfigDistributor d = new ConfigDistributor("e", 100);
        List<Node> nodes = new ArrayList<>(List.of(node("a", "g", 1), node("b", "g", 2), node("c", "g", 3),
                node("d", "g", 4)));
        d.publish(model(nodes));
        RecordingSink sink = new RecordingSink("a");
        d.subscribe("g", sink, "", 0).orElseThrow();
        return new FourMembers(d, nodes, sink);
    }

    /**
     * A shrinking group: the removal and the resized policy are one change. Every delta but the last of it says
     * "more", so the agent never runs the smaller member list with the old quorum size (3 of 3 left with quorum 3 of
     * the old 4: two heard are not enough). A resume replays the same marks.
     */
    @Test
    void theDeltasOfOneChangeAreMarkedSoTheAgentAppliesThemTogether() {
        FourMembers g = fourMembersWithAgentA();
        ConfigDistributor d = g.distributor();
        List<Node> nodes = g.nodes();
        RecordingSink sink = g.sink();
        long before = sink.sent.get(0).getRevision();
        nodes.remove(2);
        d.publish(model(nodes));

        List<ControllerMessage> deltas = sink.sent.subList(1, sink.sent.size());
        assertThat(deltas).extracting(m -> m.getDelta().getChangeCase()).containsExactly(
                ConfigDelta.ChangeCase.MEMBER_REMOVED, ConfigDelta.ChangeCase.POLICY);
        assertThat(deltas).extracting(m -> m.getDelta().getMore()).containsExactly(true, false);

        RecordingSink resumed = new RecordingSink("a");
        d.subscribe("g", resumed, "e", before).orElseThrow();
        assertThat(resumed.sent).extracting(m -> m.getDelta().getChangeCase()).containsExactly(
                ConfigDelta.ChangeCase.MEMBER_REMOVED, ConfigDelta.ChangeCase.POLICY);
        assertThat(resumed.sent).extracting(m -> m.getDelta().getMore()).containsExactly(true, false);

        // A change of its own is never marked.
        nodes.add(node("e", "g", 5));
        int sent = sink.sent.size();
        d.publish(model(nodes));
        assertThat(sink.sent.get(sink.sent.size() - 1).getDelta().getMore()).isFalse();
        assertThat(sink.sent.size()).isGreaterThan(sent);
    }

    /**
     * While the spec is invalid the agents keep the last valid policy and the members that go with it: a member list
     * moving on under a frozen quorum size stops being its majority. Signals still follow; once the spec is valid
     * again members and policy follow together.
     */
    @Test
    void anInvalidSpecFreezesTheMembersWithThePolicyButNotTheSignals() {
        FourMembers g = fourMembersWithAgentA();
        ConfigDistributor d = g.distributor();
        List<Node> nodes = g.nodes();
        RecordingSink sink = g.sink();
        int before = sink.sent.size();

        nodes.remove(3);
        List<dev.fencing.policy.Violation> broken = List.of(new dev.fencing.policy.Violation(
                "spec.fencing.timings.feedInterval", "feedInterval 30s must be below timeout / 3"));
        List<ConfigChange> changes = d.publish(GroupModel.from(new GroupSpecView("g", 2, FencingSpec.DEFAULTS,
                broken), nodes, 7946));
        assertThat(sink.sent.subList(before, sink.sent.size())).isEmpty();
        // d, gone from the group, is still told so.
        assertThat(changes).singleElement().satisfies(c -> {
            assertThat(c.delta().getChangeCase()).isEqualTo(ConfigDelta.ChangeCase.SIGNALS);
            assertThat(c.targetNode()).isEqualTo("d");
        });

        before = sink.sent.size();
        d.publish(model(nodes));
        assertThat(sink.sent.subList(before, sink.sent.size())).extracting(m -> m.getDelta().getChangeCase())
                .containsExactly(ConfigDelta.ChangeCase.MEMBER_REMOVED, ConfigDelta.ChangeCase.POLICY);
    }

    /**
     * The member sets served are kept with the times they were served (the controller's clock), under the digest an
     * agent reports for the members it was sent; an invalid spec keeps the frozen set served.
     */
    @Test
    void theMemberSetsServedAreKeptUnderTheDigestAgentsReport() {
        java.time.Instant t0 = java.time.Instant.parse("2026-11-30T10:00:00Z");
        java.util.concurrent.atomic.AtomicReference<java.time.Instant> now = new java.util.concurrent.atomic
                .AtomicReference<>(t0);
        ConfigDistributor d = new ConfigDistributor("e", 100, false, null, now::get);
        assertThat(d.memberSets("g").servedSince(t0)).isEmpty();
        List<Node> nodes = new ArrayList<>(List.of(node("a", "g", 1), node("b", "g", 2), node("c", "g", 3)));
        d.publish(model(nodes));
        RecordingSink sink = new RecordingSink("a");
        d.subscribe("g", sink, "", 0).orElseThrow();
        String digest = dev.fencing.policy.MemberSetDigest.of(sink.sent.get(0).getFull().getMembersList().stream()
                .map(dev.fencing.proto.nodemanager.v1.Member::getName).toList());
        assertThat(d.memberSets("g").byDigest(digest)).contains(java.util.Set.of("a", "b", "c"));

        now.set(t0.plusSeconds(60));
        nodes.add(node("d", "g", 4));
        d.publish(model(nodes));
        now.set(t0.plusSeconds(120));
        nodes.remove(0);
        d.publish(GroupModel.from(new GroupSpecView("g", 2, FencingSpec.DEFAULTS, List.of(new dev.fencing.policy
                .Violation("spec.fencing.quorum.size", "broken"))), nodes, 7946));
        ServedMemberSets sets = d.memberSets("g");
        assertThat(sets.servedSince(t0.plusSeconds(60))).as("{a, b, c} until 60 s, then {a, b, c, d}, frozen")
                .containsExactly(java.util.Set.of("a", "b", "c"), java.util.Set.of("a", "b", "c", "d"));
        assertThat(sets.servedSince(t0.plusSeconds(61))).containsExactly(java.util.Set.of("a", "b", "c", "d"));
        d.remove("g", "test");
        assertThat(d.memberSets("g").servedSince(t0)).isEmpty();
    }

    /**
     * A controller that starts while the spec is invalid serves the policy and members an earlier controller kept
     * (they go together: the member list frozen with the quorum size), with the signals of now; once the spec is
     * valid again both follow the cluster. A replica that already holds a valid policy never asks for the kept one.
     */
    @Test
    void aControllerStartingWhileTheSpecIsInvalidServesTheKeptPolicyAndMembers() {
        FourMembers earlier = fourMembersWithAgentA();
        ServedConfig served = earlier.distributor().lastValid("g").orElseThrow();
        assertThat(served.frozen()).isFalse();
        assertThat(served.generation()).isEqualTo(1);
        dev.fencing.proto.nodemanager.v1.GroupConfig kept = served.config();
        assertThat(kept.getMembersList()).extracting(m -> m.getName()).containsExactly("a", "b", "c", "d");
        assertThat(kept.getPolicy().getQuorumSize()).isEqualTo(3);
        assertThat(kept.hasKeyring()).isFalse();
        assertThat(kept.getNodeName()).isEmpty();

        List<dev.fencing.policy.Violation> broken = List.of(new dev.fencing.policy.Violation(
                "spec.fencing.timings.feedInterval", "feedInterval 30s must be below timeout / 3"));
        // Since then d left the cluster and a node e joined it; b is in maintenance.
        List<Node> now = new ArrayList<>(List.of(node("a", "g", 1), node("b", "g", 2), node("c", "g", 3),
                node("e", "g", 5)));
        now.get(1).getMetadata().setAnnotations(java.util.Map.of(
                dev.fencing.nodemanager.model.NodeLabels.MAINTENANCE_ANNOTATIONS.get(0), "true"));
        GroupModel invalid = GroupModel.from(new GroupSpecView("g", 3, FencingSpec.DEFAULTS, broken), now, 7946);

        ConfigDistributor restarted = new ConfigDistributor("e2", 100);
        restarted.publish(invalid, null, java.util.Optional::empty);
        assertThat(restarted.ready("g")).as("nothing kept: nothing served").isFalse();
        restarted.publish(invalid, null, () -> java.util.Optional.of(kept));
        assertThat(restarted.ready("g")).isTrue();
        RecordingSink b = new RecordingSink("b");
        restarted.subscribe("g", b, "", 0).orElseThrow();
        dev.fencing.proto.nodemanager.v1.GroupConfig full = b.sent.get(0).getFull();
        assertThat(full.getPolicy()).isEqualTo(kept.getPolicy());
        assertThat(full.getMembersList()).isEqualTo(kept.getMembersList());
        assertThat(full.getSignals().hasMaintenance()).as("signals follow the cluster").isTrue();
        assertThat(restarted.lastValid("g")).contains(new ServedConfig(kept, 3, true));

        // The kept config is asked for only while no valid policy is held.
        restarted.publish(invalid, null, () -> {
            throw new AssertionError("asked although a policy is held");
        });
        restarted.publish(model(now), null, () -> {
            throw new AssertionError("asked for a valid model");
        });
        assertThat(restarted.lastValid("g").orElseThrow().config().getMembersList()).extracting(m -> m.getName())
                .containsExactly("a", "b", "c", "e");
        assertThat(restarted.lastValid("g").orElseThrow().frozen()).isFalse();
        assertThat(b.sent.subList(1, b.sent.size())).extracting(m -> m.getDelta().getChangeCase())
                .contains(ConfigDelta.ChangeCase.MEMBER_REMOVED, ConfigDelta.ChangeCase.MEMBER_UPSERTED);
    }

    @Test
    void gossipLabelNoneReachesTheAgentsAsNoGossipLabelAndSwitchingItSendsThePolicy() {
        ConfigDistributor d = new ConfigDistributor("e", 100);
        List<Node> nodes = List.of(node("a", "g", 1), node("b", "g", 2));
        FencingSpec none = FencingSpec.DEFAULTS.withGossipLabel(GossipLabel.NONE);
        d.publish(GroupModel.from(new GroupSpecView("g", 1, none, List.of()), nodes, 7946));
        RecordingSink sink = new RecordingSink("a");
        d.subscribe("g", sink, "", 0).orElseThrow();
        assertThat(sink.sent.get(0).getFull().getPolicy().getNoGossipLabel()).isTrue();

        d.publish(model(nodes));
        ControllerMessage update = sink.sent.get(sink.sent.size() - 1);
        assertThat(update.getDelta().getChangeCase()).isEqualTo(ConfigDelta.ChangeCase.POLICY);
        assertThat(update.getDelta().getPolicy().getNoGossipLabel()).isFalse();
    }

    @Test
    void anUnchangedModelSendsNothing() {
        ConfigDistributor d = new ConfigDistributor("e", 100);
        List<Node> nodes = List.of(node("a", "g", 1));
        d.publish(model(nodes));
        assertThat(d.publish(model(nodes))).isEmpty();
    }

    @Test
    void switchingFencingOffEndsTheGroupsStreams() {
        ConfigDistributor d = new ConfigDistributor("e", 100);
        List<Node> nodes = List.of(node("a", "g", 1));
        d.publish(model(nodes));
        RecordingSink sink = new RecordingSink("a");
        d.subscribe("g", sink, "", 0).orElseThrow();
        d.publish(GroupModel.from(new GroupSpecView("g", 2, null, List.of()), nodes, 7946));
        assertThat(sink.closed.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(d.subscriberCounts()).doesNotContainKey("g");
    }

    private static dev.fencing.proto.nodemanager.v1.GossipKeyring keyring(int seed, long revision) {
        byte[] key = new byte[32];
        java.util.Arrays.fill(key, (byte) seed);
        return dev.fencing.proto.nodemanager.v1.GossipKeyring.newBuilder().setPrimary(ByteString.copyFrom(key))
                .setRevision(revision).build();
    }

    @Test
    void aDepartedNodeNeverReceivesKeysAndARejoiningOneGetsTheCurrentKeyring() {
        ConfigDistributor d = new ConfigDistributor("e", 64, true);
        List<Node> both = List.of(node("a", "g", 1), node("b", "g", 2));
        d.publish(model(both), keyring(1, 1));
        RecordingSink b = new RecordingSink("b");
        d.subscribe("g", b, "", 0).orElseThrow();
        assertThat(b.sent.get(0).getFull().getKeyring().getRevision()).isEqualTo(1);

        // b leaves the group while its stream stays open; a rotation step follows.
        d.publish(model(List.of(node("a", "g", 1))), keyring(2, 2));
        assertThat(b.sent).noneMatch(m -> m.getDelta().hasKeyring());
        RecordingSink reconnected = new RecordingSink("b");
        d.subscribe("g", reconnected, "", 0).orElseThrow();
        assertThat(reconnected.sent.get(0).getFull().getSignals().getBeingRemoved()).isTrue();
        assertThat(reconnected.sent.get(0).getFull().hasKeyring()).isFalse();
        RecordingSink resumed = new RecordingSink("b");
        d.subscribe("g", resumed, "e", b.sent.get(0).getRevision()).orElseThrow();
        assertThat(resumed.sent).noneMatch(m -> m.getDelta().hasKeyring());

        // b comes back: the agent still connected from before receives the keyring it missed.
        d.publish(model(both), null);
        assertThat(b.sent).filteredOn(m -> m.getDelta().hasKeyring()).singleElement()
                .satisfies(m -> assertThat(m.getDelta().getKeyring().getRevision()).isEqualTo(2));
    }

    private static GroupModel invalidModel(List<Node> nodes) {
        return GroupModel.from(new GroupSpecView("g", 2, FencingSpec.DEFAULTS, List.of(new dev.fencing.policy.Violation(
                "spec.fencing.timings.feedInterval", "feedInterval 30s must be below timeout / 3"))), nodes, 7946);
    }

    /**
     * An invalid spec freezes the member list for the quorum math, not key delivery: a node removed from the group
     * while the spec is invalid (to evict it by rotating the key) is still in the frozen list, yet learns no key of the
     * rotation, neither on its open stream nor on reconnect or resume. Back in the group, it gets the current keyring.
     */
    @Test
    void aNodeThatLeftWhileTheSpecIsInvalidNeverReceivesKeys() {
        ConfigDistributor d = new ConfigDistributor("e", 64, true);
        List<Node> both = List.of(node("a", "g", 1), node("b", "g", 2));
        d.publish(model(both), keyring(1, 1));
        RecordingSink b = new RecordingSink("b");
        d.subscribe("g", b, "", 0).orElseThrow();
        assertThat(b.sent.get(0).getFull().getKeyring().getRevision()).isEqualTo(1);

        // b leaves the group while the spec is invalid and its stream stays open; a rotation step follows.
        d.publish(invalidModel(List.of(node("a", "g", 1))), keyring(2, 2));
        assertThat(d.lastValid("g").orElseThrow().config().getMembersList()).extracting(m -> m.getName())
                .as("the members stay frozen with the policy").containsExactly("a", "b");
        assertThat(b.sent).noneMatch(m -> m.getDelta().hasKeyring());
        assertThat(b.sent.get(b.sent.size() - 1).getDelta().getSignals().getBeingRemoved()).isTrue();
        RecordingSink reconnected = new RecordingSink("b");
        d.subscribe("g", reconnected, "", 0).orElseThrow();
        assertThat(reconnected.sent.get(0).getFull().getSignals().getBeingRemoved()).isTrue();
        assertThat(reconnected.sent.get(0).getFull().hasKeyring()).isFalse();
        RecordingSink resumed = new RecordingSink("b");
        d.subscribe("g", resumed, "e", b.sent.get(0).getRevision()).orElseThrow();
        assertThat(resumed.sent).noneMatch(m -> m.getDelta().hasKeyring());
        RecordingSink a = new RecordingSink("a");
        d.subscribe("g", a, "", 0).orElseThrow();
        assertThat(a.sent.get(0).getFull().getKeyring().getRevision()).as("members still get keys").isEqualTo(2);

        // A node being deleted (deletionTimestamp) is being removed too.
        Node deleting = node("a", "g", 1);
        deleting.getMetadata().setDeletionTimestamp("2026-11-23T10:00:00Z");
        d.publish(invalidModel(List.of(deleting)), keyring(3, 3));
        assertThat(a.sent.subList(1, a.sent.size())).noneMatch(m -> m.getDelta().hasKeyring());

        // b comes back, the spec still invalid: its open stream receives the keyring it missed, and only that one.
        d.publish(invalidModel(List.of(deleting, node("b", "g", 2))), null);
        assertThat(b.sent).filteredOn(m -> m.getDelta().hasKeyring()).singleElement()
                .satisfies(m -> assertThat(m.getDelta().getKeyring().getRevision()).isEqualTo(3));
        assertThat(a.sent.subList(1, a.sent.size())).noneMatch(m -> m.getDelta().hasKeyring());
    }
}
