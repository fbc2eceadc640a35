package dev.fencing.nodemanager.stream;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.model.GroupSpecView;
import dev.fencing.nodemanager.model.NetworkAddresses;
import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.GossipNetworks;
import dev.fencing.policy.Reachability;
import dev.fencing.policy.TieBreakerKind;
import dev.fencing.proto.nodemanager.v1.ConfigDelta;
import io.fabric8.kubernetes.api.model.Node;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** One agent's new per-network address is one member delta, of the same size whatever the group size. */
class NetworkAddressDeltaTest {

    static final String N1 = "198.18.0.0/24";
    static final String N2 = "198.19.0.0/24";

    static GroupModel model(int size, Map<String, Map<String, String>> reported) {
        FencingSpec spec = FencingSpec.DEFAULTS.withTieBreakers(List.of(TieBreakerKind.LOWEST_NAME))
                .withNetworks(GossipNetworks.parse(List.of(N1, N2), Reachability.ALL));
        List<Node> nodes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            nodes.add(node(String.format("n%04d", i), "g", i % 200 + 1));
        }
        return NetworkAddresses.complete(GroupModel.from(new GroupSpecView("g", 1, spec, List.of()), nodes, 9651),
                reported, 9651).model();
    }

    static List<ConfigChange> changeOfOneAddress(int size) {
        GroupConfigLog log = new GroupConfigLog("g", new AtomicLong()::incrementAndGet, 100);
        Map<String, Map<String, String>> reported = new HashMap<>();
        log.update(model(size, reported));
        reported.put("n0001", Map.of(N2, "198.19.0.7"));
        return log.update(model(size, reported));
    }

    @Test
    void aReportedAddressIsOneMemberUpsertOfConstantSize() {
        List<ConfigChange> small = changeOfOneAddress(10);
        List<ConfigChange> large = changeOfOneAddress(1000);
        assertThat(small).hasSize(1);
        assertThat(large).hasSize(1);
        ConfigDelta delta = large.get(0).delta();
        assertThat(delta.getMemberUpserted().getName()).isEqualTo("n0001");
        assertThat(delta.getMemberUpserted().getGossipAddressesMap()).isEqualTo(Map.of(N2, "198.19.0.7:9651"));
        assertThat(delta.getSerializedSize()).isEqualTo(small.get(0).delta().getSerializedSize());
    }

    @Test
    void theFullConfigCarriesTheNetworksTheRuleAndEveryMembersAddresses() {
        GroupConfigLog log = new GroupConfigLog("g", new AtomicLong()::incrementAndGet, 100);
        log.update(model(3, Map.of("n0002", Map.of(N1, "198.18.0.9"))));
        var full = log.full("n0000").orElseThrow();
        assertThat(full.getPolicy().getNetworksList()).containsExactly(N1, N2);
        assertThat(full.getPolicy().getReachability())
                .isEqualTo(dev.fencing.proto.fencing.v1.Reachability.REACHABILITY_ALL);
        assertThat(full.getMembersList()).filteredOn(m -> m.getName().equals("n0002"))
                .allSatisfy(m -> assertThat(m.getGossipAddressesMap()).isEqualTo(Map.of(N1, "198.18.0.9:9651")));
    }
}
