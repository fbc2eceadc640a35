package dev.fencing.api.v1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.policy.AfterFence;
import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.FencingSpecReader;
import dev.fencing.policy.GossipLabel;
import dev.fencing.policy.InvalidPolicyException;
import dev.fencing.policy.MinHealthy;
import dev.fencing.policy.Mode;
import dev.fencing.policy.Profile;
import dev.fencing.policy.QuorumLossAction;
import dev.fencing.policy.ResolvedPolicy;
import dev.fencing.policy.StormLimits;
import dev.fencing.policy.TieBreakerKind;
import dev.fencing.policy.Violation;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class NodeGroupFencingTest {

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private static NodeGroup parse(String yaml) {
        return SERIALIZATION.unmarshal(yaml, NodeGroup.class);
    }

    @Test
    void mapsEveryFieldOfAFullYamlSpec() {
        NodeGroup ng = parse("""
                apiVersion: deckhouse.io/v1
                kind: NodeGroup
                metadata:
                  name: workers
                spec:
                  nodeType: Static
                  fencing:
                    mode: Watchdog
                    watchdog:
                      timeout: 30s
                    quorumLossAction: Exclude
                    profile: Medium
                    quorum:
                      size: 3
                      tieBreakers: [LowestName]
                    timings:
                      probeInterval: 800ms
                      probeTimeout: 300ms
                      suspicionMult: 4
                      suspicionMaxTimeoutMult: 5
                      gossipInterval: 250ms
                      gossipNodes: 4
                      retransmitMult: 3
                      pushPullInterval: 1m
                      heartbeatInterval: 400ms
                      quorumWindow: 2s
                      localHealthCap: 2.0
                      evaluationTick: 50ms
                      feedInterval: 2s
                      armingDelay: 5s
                      fenceMargin: 1m30s
                """);
        assertThat(ng.getSpec().getNodeType()).isEqualTo(NodeType.STATIC);
        FencingSpec spec = NodeGroupFencing.toFencingSpec(ng);
        assertThat(spec.mode()).isEqualTo(Mode.WATCHDOG);
        assertThat(spec.watchdogTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(spec.quorumLossAction()).isEqualTo(QuorumLossAction.EXCLUDE);
        assertThat(spec.profile()).isEqualTo(Profile.MEDIUM);
        assertThat(spec.quorumSize()).isEqualTo(3);
        assertThat(spec.tieBreakers()).containsExactly(TieBreakerKind.LOWEST_NAME);
        assertThat(spec.timings().probeInterval()).isEqualTo(Duration.ofMillis(800));
        assertThat(spec.timings().probeTimeout()).isEqualTo(Duration.ofMillis(300));
        assertThat(spec.timings().suspicionMult()).isEqualTo(4);
        assertThat(spec.timings().suspicionMaxTimeoutMult()).isEqualTo(5);
        assertThat(spec.timings().gossipInterval()).isEqualTo(Duration.ofMillis(250));
        assertThat(spec.timings().gossipNodes()).isEqualTo(4);
        assertThat(spec.timings().retransmitMult()).isEqualTo(3);
        assertThat(spec.timings().pushPullInterval()).isEqualTo(Duration.ofMinutes(1));
        assertThat(spec.timings().heartbeatInterval()).isEqualTo(Duration.ofMillis(400));
        assertThat(spec.timings().quorumWindow()).isEqualTo(Duration.ofSeconds(2));
        assertThat(spec.timings().localHealthCap()).isEqualTo(2.0);
        assertThat(spec.timings().evaluationTick()).isEqualTo(Duration.ofMillis(50));
        assertThat(spec.timings().feedInterval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(spec.timings().armingDelay()).isEqualTo(Duration.ofSeconds(5));
        assertThat(spec.timings().fenceMargin()).isEqualTo(Duration.ofSeconds(90));

        ResolvedPolicy policy = NodeGroupFencing.resolve(ng, 4);
        assertThat(policy.quorumSize()).isEqualTo(3);
        assertThat(policy.timings().profile()).isEqualTo("Medium+overrides");
    }

    @Test
    void emptyFencingObjectMeansAllDefaults() {
        NodeGroup ng = parse("""
                apiVersion: deckhouse.io/v1
                kind: NodeGroup
                metadata: {name: workers}
                spec: {nodeType: CloudEphemeral, fencing: {}}
                """);
        assertThat(NodeGroupFencing.fencingEnabled(ng)).isTrue();
        assertThat(NodeGroupFencing.toFencingSpec(ng)).isEqualTo(FencingSpec.DEFAULTS);
    }

    @Test
    void gossipLabelIsMappedAndABadOneNamesItsPath() {
        assertThat(NodeGroupFencing.map(new Fencing().withGossipLabel("None")).spec().gossipLabel())
                .isEqualTo(GossipLabel.NONE);
        assertThat(NodeGroupFencing.map(new Fencing()).spec().effectiveGossipLabel())
                .isEqualTo(GossipLabel.GROUP_NAME);
        assertThat(NodeGroupFencing.map(new Fencing().withGossipLabel("Off")).violations())
                .extracting(Violation::field).containsExactly("spec.fencing.gossipLabel");
    }

    @Test
    void quorumSizeAcceptsAutoAndNumbersWrittenAsStrings() {
        Fencing auto = new Fencing().withQuorum(new FencingQuorum().withSize(new IntOrString("Auto")));
        assertThat(NodeGroupFencing.map(auto).spec().quorumSize()).isNull();
        Fencing quoted = new Fencing().withQuorum(new FencingQuorum().withSize(new IntOrString("4")));
        assertThat(NodeGroupFencing.map(quoted).spec().quorumSize()).isEqualTo(4);
        Fencing bad = new Fencing().withQuorum(new FencingQuorum().withSize(new IntOrString("most")));
        assertThat(NodeGroupFencing.map(bad).violations()).containsExactly(new Violation("spec.fencing.quorum.size",
                "quorum size 'most' is not valid; write Auto or a whole number such as 3"));
    }

    @Test
    void everyBadStringBecomesAViolationWithItsPath() {
        Fencing fencing = new Fencing()
                .withMode("watchdog")
                .withWatchdog(new FencingWatchdog().withTimeout("1m30s"))
                .withQuorumLossAction("Reboot")
                .withProfile("Fast")
                .withQuorum(new FencingQuorum().withTieBreakers(Arrays.asList("ControlPlane", "Coin", null)))
                .withTimings(new FencingTimings().withFeedInterval("5 s").withQuorumWindow("2d"));
        FencingSpecReader.Result mapping = NodeGroupFencing.map(fencing);
        assertThat(mapping.valid()).isFalse();
        assertThat(mapping.spec()).isNull();
        assertThat(mapping.violations()).containsExactly(
                new Violation("spec.fencing.mode",
                        "fencing mode 'watchdog' is not spelled as the CRD expects; write 'Watchdog'"),
                new Violation("spec.fencing.watchdog.timeout",
                        "timeout '1m30s' is not valid; write a whole number of seconds, minutes or hours, e.g. 60s, 5m, 1h"),
                new Violation("spec.fencing.quorumLossAction",
                        "quorumLossAction 'Reboot' is not known; use one of Fence, Exclude, Wait"),
                new Violation("spec.fencing.profile",
                        "profile 'Fast' is not known; use one of Auto, Critical, Medium, Moderate, Slow"),
                new Violation("spec.fencing.quorum.tieBreakers[1]",
                        "tie-breaker 'Coin' is not known; use one of ControlPlane, LowestName, Disk, APIReachable"),
                new Violation("spec.fencing.timings.quorumWindow", "duration '2d' is not valid; write numbers with "
                        + "units ns, us, ms, s, m or h and no sign or spaces, e.g. 500ms, 2s, 1m30s, 1h"),
                new Violation("spec.fencing.timings.feedInterval", "duration '5 s' is not valid; write numbers with "
                        + "units ns, us, ms, s, m or h and no sign or spaces, e.g. 500ms, 2s, 1m30s, 1h"));
    }

    @Test
    void toFencingSpecThrowsWithAllViolations() {
        NodeGroup ng = new NodeGroup();
        ng.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing().withProfile("Fast")));
        assertThatThrownBy(() -> NodeGroupFencing.toFencingSpec(ng))
                .isInstanceOf(InvalidPolicyException.class)
                .hasMessage("invalid fencing policy: spec.fencing.profile: profile 'Fast' is not known; use one of "
                        + "Auto, Critical, Medium, Moderate, Slow");
    }

    @Test
    void mappingAGroupWithoutFencingIsACallerError() {
        NodeGroup ng = new NodeGroup();
        ng.getMetadata().setName("frontend");
        ng.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC));
        assertThat(NodeGroupFencing.fencingEnabled(ng)).isFalse();
        assertThatThrownBy(() -> NodeGroupFencing.map(ng)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("NodeGroup frontend has no spec.fencing: fencing is off for it; check fencingEnabled() "
                        + "before mapping");
    }

    @Test
    void mapsStormLimitsAndAfterFence() {
        Fencing f = new Fencing().withStorm(new FencingStorm().withMinHealthy(new IntOrString("40%"))
                .withMaxConcurrent(2).withCooldown("5m")).withAfterFence("DeleteNode");
        FencingSpec spec = NodeGroupFencing.map(f).orThrow();
        assertThat(spec.storm()).isEqualTo(new StormLimits(new MinHealthy(40, true), 2, Duration.ofMinutes(5)));
        assertThat(spec.afterFence()).isEqualTo(AfterFence.DELETE_NODE);
        assertThat(NodeGroupFencing.map(new Fencing().withStorm(new FencingStorm().withMinHealthy(
                new IntOrString(3)))).orThrow().storm().minHealthy()).isEqualTo(new MinHealthy(3, false));
        assertThat(NodeGroupFencing.map(new Fencing().withAfterFence("Reboot")).violations())
                .extracting(v -> v.field()).containsExactly("spec.fencing.afterFence");
    }

    @Test
    void treeLeavesOutAbsentValues() {
        assertThat(NodeGroupFencing.tree(new Fencing().withMode("Notify").withTimings(new FencingTimings())))
                .containsExactly(java.util.Map.entry("mode", "Notify"), java.util.Map.entry("timings", java.util.Map.of()));
    }

    @Test
    void networksAndReachabilityMapToThePolicyAndBadOnesAreViolations() {
        FencingSpec spec = NodeGroupFencing.map(new Fencing().withNetworks(java.util.List.of("198.18.0.0/24",
                "198.18.1.0/24")).withReachability("All")).orThrow();
        assertThat(spec.effectiveNetworks().texts()).containsExactly("198.18.0.0/24", "198.18.1.0/24");
        assertThat(spec.effectiveNetworks().reachability()).isEqualTo(dev.fencing.policy.Reachability.ALL);
        assertThat(NodeGroupFencing.map(new Fencing().withNetworks(java.util.List.of("198.18.0.0/24",
                "198.18.0.0/24"))).violations()).containsExactly(new Violation("spec.fencing.networks",
                "networks[1] '198.18.0.0/24' repeats networks[0] '198.18.0.0/24'; list each network once"));
    }
}
