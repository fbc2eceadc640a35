package dev.fencing.nodemanager.model;

import dev.fencing.policy.GossipNetworks;
import dev.fencing.policy.NetworkCidr;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Completes a group's members with their gossip address on each network of the policy, from what each agent
 * reported it bound there ({@code AgentReport.network_addresses}, CIDR → IP), at the group's gossip port (agents use
 * the same port on every network). Only configured networks count, and only an IP inside its network: anything else
 * is refused and listed, never sent to peers. Pure.
 */
public final class NetworkAddresses {

    private NetworkAddresses() {
    }

    /**
     * The model with per-network gossip addresses, and what was refused.
     *
     * @param model   the group as computed from the caches
     * @param refused one entry per refused report entry: {@code node=… network=… address=… reason=…}
     */
    public record Result(GroupModel model, List<String> refused) {

        /** Copies the list. */
        public Result {
            refused = List.copyOf(refused);
        }
    }

    /**
     * @param model      the group as computed from the caches
     * @param reported   node → (CIDR → IP) as its agent last reported
     * @param gossipPort the agents' gossip port
     */
    public static Result complete(GroupModel model, Map<String, Map<String, String>> reported, int gossipPort) {
        GossipNetworks networks = model.policy() == null ? GossipNetworks.SINGLE : model.policy().networks();
        List<String> refused = new ArrayList<>();
        SortedMap<String, GroupMember> out = new TreeMap<>();
        boolean changed = false;
        for (GroupMember m : model.expected().values()) {
            Map<String, String> own = reported.getOrDefault(m.name(), Map.of());
            Map<String, String> perNetwork = new TreeMap<>();
            for (Map.Entry<String, String> e : own.entrySet()) {
                NetworkCidr cidr = networks.cidrs().stream().filter(c -> c.text().equals(e.getKey())).findFirst()
                        .orElse(null);
                if (cidr == null) {
                    refused.add("node=" + m.name() + " network=" + e.getKey() + " address=" + e.getValue()
                            + " reason=\"not a network of the group " + networks.texts() + "\"");
                } else if (!cidr.containsLiteral(e.getValue())) {
                    refused.add("node=" + m.name() + " network=" + e.getKey() + " address=" + e.getValue()
                            + " reason=\"not an IP inside the network\"");
                } else {
                    perNetwork.put(cidr.text(), GroupModel.hostPort(e.getValue(), gossipPort));
                }
            }
            changed |= !perNetwork.equals(m.gossipAddresses());
            out.put(m.name(), new GroupMember(m.name(), m.gossipAddress(), m.addresses(), perNetwork));
        }
        return new Result(changed ? model.withExpected(out) : model, refused);
    }
}
