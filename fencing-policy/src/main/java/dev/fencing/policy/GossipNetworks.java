package dev.fencing.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * {@code spec.fencing.networks} and {@code spec.fencing.reachability}: the networks the group gossips and measures
 * round trips on, and how a peer's per-network round trips combine. No networks = one network, the node's gossip
 * address (its InternalIP), exactly as before networks existed.
 *
 * @param cidrs        0..{@link #MAX_NETWORKS} distinct networks, in the order written
 * @param reachability Any or All
 */
public record GossipNetworks(List<NetworkCidr> cidrs, Reachability reachability) {

    /** At most this many networks: each is one memberlist and one heartbeat per peer and interval. */
    public static final int MAX_NETWORKS = 4;
    /** The default rule: a peer counts when reachable on any network. */
    public static final Reachability DEFAULT_REACHABILITY = Reachability.ANY;
    /** One network (the gossip address), rule Any. */
    public static final GossipNetworks SINGLE = new GossipNetworks(List.of(), DEFAULT_REACHABILITY);

    /** Copies the list; rejects more than {@link #MAX_NETWORKS} and repeated networks. */
    public GossipNetworks {
        cidrs = List.copyOf(cidrs);
        Objects.requireNonNull(reachability, "reachability");
        List<String> problems = problems(cidrs);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", problems));
        }
    }

    /** True when the group gossips on listed networks rather than on the gossip address alone. */
    public boolean multiple() {
        return !cidrs.isEmpty();
    }

    /** The CIDRs as written. */
    public List<String> texts() {
        return cidrs.stream().map(NetworkCidr::text).toList();
    }

    /**
     * Parses networks as they come from the wire or a file.
     *
     * @throws IllegalArgumentException naming the first bad entry
     */
    public static GossipNetworks parse(List<String> cidrs, Reachability reachability) {
        List<NetworkCidr> parsed = new ArrayList<>();
        for (int i = 0; i < cidrs.size(); i++) {
            try {
                parsed.add(NetworkCidr.parse(cidrs.get(i)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("networks[" + i + "]: " + e.getMessage(), e);
            }
        }
        return new GossipNetworks(parsed, reachability);
    }

    /** What is wrong with a list of networks: too many, one repeated (whatever the spelling), or two overlapping. */
    static List<String> problems(List<NetworkCidr> cidrs) {
        List<String> out = new ArrayList<>();
        if (cidrs.size() > MAX_NETWORKS) {
            out.add(cidrs.size() + " networks listed; at most " + MAX_NETWORKS + " are supported");
        }
        for (int i = 0; i < cidrs.size(); i++) {
            for (int j = 0; j < i; j++) {
                NetworkCidr a = cidrs.get(i);
                NetworkCidr b = cidrs.get(j);
                if (a.sameNetwork(b)) {
                    out.add("networks[" + i + "] '" + a + "' repeats networks[" + j + "] '" + b
                            + "'; list each network once");
                } else if (a.overlaps(b)) {
                    // An address in both would not say which network a heartbeat came in on.
                    out.add("networks[" + i + "] '" + a + "' overlaps networks[" + j + "] '" + b
                            + "'; list networks that share no address");
                }
            }
        }
        return out;
    }
}
