package dev.fencing.nodemanager.model;

import dev.fencing.policy.GossipNetworks;
import dev.fencing.policy.NetworkCidr;
import io.fabric8.kubernetes.api.model.Node;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A node's address on each gossip network of its group, kept on the Node as the annotation {@link #KEY}
 * ({@code <CIDR>=<IP>,<CIDR>=<IP>}, sorted by CIDR). Only the leader writes it, from the node's own agent report
 * ({@code AgentReport.network_addresses}); every replica reads it from its Node cache. Without it a replica knows a
 * member's secondary-network address only while that member's agent streams to it: a follower, a new leader and a
 * restarted controller would send peers a member list without those addresses, and under {@code reachability: All}
 * the peers could no longer count the member. Pure.
 */
public final class GossipAddressAnnotation {

    /** The annotation: written by the controller, read by every replica. */
    public static final String KEY = "node-manager.deckhouse.io/fencing-gossip-addresses";

    // A group has at most GossipNetworks.MAX_NETWORKS networks: a longer value is not ours, and is not read further.
    private static final int MAX_ENTRIES = 2 * GossipNetworks.MAX_NETWORKS;

    private GossipAddressAnnotation() {
    }

    /** The annotation's value on {@code node}, or null when it has none. */
    public static String of(Node node) {
        Map<String, String> annotations = node.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(KEY);
    }

    /**
     * The value to write for what an agent reported: the entries whose CIDR is a network of the group and whose IP
     * lies inside it, sorted by CIDR; empty when none is (nothing to write: an agent that reports no address, e.g.
     * before it knows its config, does not erase what is known).
     */
    public static Optional<String> fromReport(GossipNetworks networks, Map<String, String> reported) {
        SortedMap<String, String> kept = new TreeMap<>();
        for (NetworkCidr cidr : networks.cidrs()) {
            String ip = reported.get(cidr.text());
            if (ip != null && cidr.containsLiteral(ip)) {
                kept.put(cidr.text(), ip);
            }
        }
        if (kept.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(kept.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(",")));
    }

    /**
     * The CIDR → IP entries of a value, as written; an entry without {@code =} or with an empty side is skipped. What
     * it names is checked where it is used ({@link NetworkAddresses}: only the group's networks, only IPs inside).
     */
    public static Map<String, String> parse(String value) {
        Map<String, String> out = new TreeMap<>();
        if (value == null) {
            return out;
        }
        String[] entries = value.split(",", MAX_ENTRIES + 1);
        for (int i = 0; i < Math.min(entries.length, MAX_ENTRIES); i++) {
            String entry = entries[i].trim();
            int eq = entry.indexOf('=');
            if (eq > 0 && eq < entry.length() - 1) {
                out.putIfAbsent(entry.substring(0, eq).trim(), entry.substring(eq + 1).trim());
            }
        }
        return out;
    }
}
