package dev.fencing.nodemanager.model;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.GossipNetworks;
import dev.fencing.policy.Reachability;
import dev.fencing.policy.TieBreakerKind;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NetworkAddressesTest {

    static final String N1 = "198.18.0.0/24";
    static final String N2 = "198.19.0.0/24";

    static GroupModel model(GossipNetworks networks) {
        FencingSpec spec = FencingSpec.DEFAULTS.withTieBreakers(List.of(TieBreakerKind.LOWEST_NAME))
                .withNetworks(networks);
        return GroupModel.from(new GroupSpecView("g", 1, spec, List.of()),
                List.of(node("a", "g", 1), node("b", "g", 2), node("c", "g", 3)), 9651);
    }

    @Test
    void reportedAddressesInsideConfiguredNetworksBecomeGossipAddressesAtTheGossipPort() {
        GroupModel model = model(GossipNetworks.parse(List.of(N1, N2), Reachability.ALL));
        NetworkAddresses.Result result = NetworkAddresses.complete(model, Map.of(
                "a", Map.of(N1, "198.18.0.11", N2, "198.19.0.11"),
                "b", Map.of(N2, "198.19.0.12")), 9651);
        assertThat(result.refused()).isEmpty();
        assertThat(result.model().expected().get("a").gossipAddresses())
                .isEqualTo(Map.of(N1, "198.18.0.11:9651", N2, "198.19.0.11:9651"));
        assertThat(result.model().expected().get("b").gossipAddresses()).isEqualTo(Map.of(N2, "198.19.0.12:9651"));
        assertThat(result.model().expected().get("c").gossipAddresses()).isEmpty();
        assertThat(result.model().expected().get("a").gossipAddress())
                .isEqualTo(model.expected().get("a").gossipAddress());
    }

    @Test
    void anAddressOutsideItsNetworkOrForAnotherNetworkIsRefused() {
        GroupModel model = model(GossipNetworks.parse(List.of(N1, N2), Reachability.ANY));
        NetworkAddresses.Result result = NetworkAddresses.complete(model, Map.of(
                "a", Map.of(N2, "10.0.0.5", "10.9.0.0/16", "10.9.0.1")), 9651);
        assertThat(result.model().expected().get("a").gossipAddresses()).isEmpty();
        assertThat(result.refused()).containsExactlyInAnyOrder(
                "node=a network=198.19.0.0/24 address=10.0.0.5 reason=\"not an IP inside the network\"",
                "node=a network=10.9.0.0/16 address=10.9.0.1 reason=\"not a network of the group"
                        + " [198.18.0.0/24, 198.19.0.0/24]\"");
    }

    @Test
    void aGroupWithOneNetworkIsLeftAsItIs() {
        GroupModel model = model(GossipNetworks.SINGLE);
        NetworkAddresses.Result result = NetworkAddresses.complete(model, Map.of(), 9651);
        assertThat(result.model()).isSameAs(model);
        assertThat(result.refused()).isEmpty();
    }
}
