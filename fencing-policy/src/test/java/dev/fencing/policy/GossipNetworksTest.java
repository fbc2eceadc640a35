package dev.fencing.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.proto.nodemanager.v1.FencingPolicy;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GossipNetworksTest {

    private static FencingSpecReader.Result read(Map<String, ?> block) {
        return FencingSpecReader.read(block, "spec.fencing");
    }

    @Test
    void noNetworksMeansTheGossipAddressAloneWithRuleAny() {
        FencingSpec spec = read(Map.of()).orThrow();
        assertThat(spec.networks()).isNull();
        assertThat(spec.effectiveNetworks()).isEqualTo(GossipNetworks.SINGLE);
        assertThat(spec.effectiveNetworks().multiple()).isFalse();
        assertThat(PolicyResolver.resolve(spec, 3).networks()).isEqualTo(GossipNetworks.SINGLE);
    }

    @Test
    void networksAndReachabilityAreReadAndResolved() {
        FencingSpec spec = read(Map.of("networks", List.of("198.18.0.0/24", "fd00:1::/64"), "reachability", "All"))
                .orThrow();
        GossipNetworks networks = PolicyResolver.resolve(spec, 3).networks();
        assertThat(networks.texts()).containsExactly("198.18.0.0/24", "fd00:1::/64");
        assertThat(networks.reachability()).isEqualTo(Reachability.ALL);
        assertThat(read(Map.of("networks", List.of("10.0.0.0/8"))).orThrow().effectiveNetworks().reachability())
                .isEqualTo(Reachability.ANY);
    }

    @Test
    void badCidrsAreViolationsSayingWhatToWrite() {
        assertThat(read(Map.of("networks", List.of("10.0.0.0", "10.0.0.5/24", "10.0.0.0/33", "eth0/24", "")))
                .violations()).containsExactly(
                new Violation("spec.fencing.networks[0]", "'10.0.0.0' is not a CIDR (address/prefix length); write a"
                        + " network such as 10.0.0.0/24 or fd00::/64"),
                new Violation("spec.fencing.networks[1]", "'10.0.0.5/24' has host bits set; write the network address"
                        + " 10.0.0.0/24"),
                new Violation("spec.fencing.networks[2]", "'10.0.0.0/33' has prefix length 33, more than the 32 bits"
                        + " of the address"),
                new Violation("spec.fencing.networks[3]", "'eth0/24' does not start with an IPv4 or IPv6 address;"
                        + " write a network such as 10.0.0.0/24 or fd00::/64"),
                new Violation("spec.fencing.networks[4]", "network CIDR is empty; write a network such as"
                        + " 10.0.0.0/24 or fd00::/64"));
        assertThat(read(Map.of("networks", "10.0.0.0/24")).violations()).containsExactly(new Violation(
                "spec.fencing.networks", "networks must be a list of CIDRs such as [10.0.0.0/24, 10.1.0.0/24], not"
                        + " '10.0.0.0/24'"));
    }

    @Test
    void duplicatesOverlapsAndMoreThanFourAreRefused() {
        assertThat(read(Map.of("networks", List.of("fd00::/64", "fd00:0::/64"))).violations()).containsExactly(
                new Violation("spec.fencing.networks", "networks[1] 'fd00:0::/64' repeats networks[0] 'fd00::/64';"
                        + " list each network once"));
        assertThat(read(Map.of("networks", List.of("10.0.0.0/8", "10.1.0.0/16"))).violations()).containsExactly(
                new Violation("spec.fencing.networks", "networks[1] '10.1.0.0/16' overlaps networks[0] '10.0.0.0/8';"
                        + " list networks that share no address"));
        assertThat(read(Map.of("networks", List.of("10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24",
                "10.0.4.0/24"))).violations()).containsExactly(new Violation("spec.fencing.networks",
                "5 networks listed; at most 4 are supported"));
    }

    @Test
    void reachabilityIsAnyOrAll() {
        assertThat(read(Map.of("reachability", "Both")).violations()).containsExactly(new Violation(
                "spec.fencing.reachability", "reachability 'Both' is not known; use one of Any, All"));
        assertThat(read(Map.of("reachability", "all")).violations()).containsExactly(new Violation(
                "spec.fencing.reachability", "reachability 'all' is not spelled as the CRD expects; write 'All'"));
    }

    @Test
    void containsMatchesOnlyAddressesOfTheNetwork() throws Exception {
        NetworkCidr v4 = NetworkCidr.parse("198.18.0.0/15");
        assertThat(v4.contains(InetAddress.getByName("198.19.255.1"))).isTrue();
        assertThat(v4.contains(InetAddress.getByName("198.20.0.1"))).isFalse();
        assertThat(v4.containsLiteral("198.18.3.4")).isTrue();
        assertThat(v4.containsLiteral("node-1")).isFalse();
        assertThat(NetworkCidr.parse("fd00::/64").containsLiteral("fd00::5")).isTrue();
        assertThat(NetworkCidr.parse("fd00::/64").containsLiteral("198.18.3.4")).isFalse();
        assertThat(NetworkCidr.parse("0.0.0.0/0").containsLiteral("1.2.3.4")).isTrue();
    }

    @Test
    void networksCrossTheWireAndASingleNetworkAddsNothing() {
        FencingSpec spec = read(Map.of("networks", List.of("198.18.0.0/24", "198.18.1.0/24"), "reachability", "All"))
                .orThrow();
        ResolvedPolicy policy = PolicyResolver.resolve(spec, 3);
        FencingPolicy wire = PolicyProtos.toProto(policy);
        assertThat(wire.getNetworksList()).containsExactly("198.18.0.0/24", "198.18.1.0/24");
        assertThat(wire.getReachability()).isEqualTo(dev.fencing.proto.fencing.v1.Reachability.REACHABILITY_ALL);
        assertThat(PolicyProtos.fromProto(wire, 3)).isEqualTo(policy);

        FencingPolicy single = PolicyProtos.toProto(PolicyResolver.resolve(FencingSpec.DEFAULTS, 3));
        assertThat(single.getNetworksCount()).isZero();
        assertThat(single.getReachabilityValue()).isZero();
        assertThat(PolicyProtos.fromProto(single, 3).networks()).isEqualTo(GossipNetworks.SINGLE);
    }

    @Test
    void aWirePolicyWithABadNetworkIsRejectedWithTheField() {
        FencingPolicy wire = PolicyProtos.toProto(PolicyResolver.resolve(FencingSpec.DEFAULTS, 3)).toBuilder()
                .addNetworks("10.0.0.0/24").addNetworks("10.0.0.1/24").build();
        assertThatThrownBy(() -> PolicyProtos.fromProto(wire, 3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("FencingPolicy.networks[1]: '10.0.0.1/24' has host bits set; write the network address"
                        + " 10.0.0.0/24");
    }
}
