package dev.fencing.nodemanager.model;

import dev.fencing.policy.InvalidPolicyException;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.policy.ResolvedPolicy;
import dev.fencing.policy.Violation;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Everything the controller derives for one NodeGroup from its informer caches, as a pure function of the NodeGroup
 * and the Nodes labelled into it: the expected members with their addresses, per-node signals, and the resolved
 * policy with every timing (or the violations that prevent resolving it).
 *
 * @param group        NodeGroup name
 * @param generation   NodeGroup metadata.generation the model was computed from
 * @param fencingEnabled spec.fencing is present
 * @param expected     expected members (in the group, not being removed), sorted by name
 * @param signals      signals of every node labelled into the group, by node name
 * @param policy       the resolved policy, or null when fencing is off or the spec is invalid
 * @param violations   why the spec is invalid (field path and message); empty when valid or off
 */
public record GroupModel(
        String group,
        long generation,
        boolean fencingEnabled,
        SortedMap<String, GroupMember> expected,
        Map<String, NodeSignal> signals,
        ResolvedPolicy policy,
        List<Violation> violations) {

    /**
     * Default TCP/UDP port of the agents' gossip: clear of MetalLB's memberlist (7946) and Deckhouse's own agent
     * (8500), which may run on the same hosts.
     */
    public static final int DEFAULT_GOSSIP_PORT = 9651;

    /** Address type used for the gossip address when present. */
    static final String GOSSIP_ADDRESS_TYPE = "InternalIP";

    /** Freezes the collections. */
    public GroupModel {
        Objects.requireNonNull(group, "group");
        expected = Collections.unmodifiableSortedMap(new TreeMap<>(expected));
        signals = Map.copyOf(signals);
        violations = List.copyOf(violations);
    }

    /**
     * Computes the model.
     *
     * @param spec        the NodeGroup's name and spec.fencing
     * @param nodes       Nodes from the cache; those not labelled into the group are ignored
     * @param gossipPort  the port agents gossip on
     */
    public static GroupModel from(GroupSpecView spec, Collection<Node> nodes, int gossipPort) {
        SortedMap<String, GroupMember> expected = new TreeMap<>();
        Map<String, NodeSignal> signals = new LinkedHashMap<>();
        for (Node node : nodes) {
            if (node.getMetadata() == null || node.getMetadata().getLabels() == null
                    || !spec.name().equals(node.getMetadata().getLabels().get(NodeLabels.GROUP))) {
                continue;
            }
            String name = node.getMetadata().getName();
            NodeSignal signal = signalOf(node);
            signals.put(name, signal);
            GroupMember member = memberOf(node, gossipPort);
            // A Node without an InternalIP or ExternalIP yet (its cloud provider has not initialised it) has no agent
            // anyone can reach: it joins the expected set once it has one. Listed, it made every agent refuse every
            // config of the group ("address is missing"), disarm signals and keys included.
            if (!signal.beingRemoved() && !member.gossipAddress().isEmpty()) {
                expected.put(name, member);
            }
        }
        ResolvedPolicy policy = null;
        List<Violation> violations = new ArrayList<>(spec.specViolations());
        if (spec.fencing() != null && violations.isEmpty()) {
            try {
                policy = PolicyResolver.resolve(spec.fencing(), expected.size());
            } catch (InvalidPolicyException e) {
                violations.addAll(e.violations());
            }
        }
        return new GroupModel(spec.name(), spec.generation(), spec.fencingEnabled(), expected, signals, policy,
                violations);
    }

    /** Computes the model of a NodeGroup (see {@link #from(GroupSpecView, Collection, int)}). */
    public static GroupModel from(dev.fencing.api.v1.NodeGroup nodeGroup, Collection<Node> nodes, int gossipPort) {
        return from(NodeGroupSpecs.view(nodeGroup), nodes, gossipPort);
    }

    /** Signals of one Node: maintenance from the first present annotation, removal from deletionTimestamp. */
    public static NodeSignal signalOf(Node node) {
        Map<String, String> annotations = node.getMetadata().getAnnotations();
        String source = null;
        String value = null;
        if (annotations != null) {
            for (String key : NodeLabels.MAINTENANCE_ANNOTATIONS) {
                if (annotations.containsKey(key)) {
                    source = key;
                    value = Objects.requireNonNullElse(annotations.get(key), "");
                    break;
                }
            }
        }
        boolean deleting = node.getMetadata().getDeletionTimestamp() != null;
        return new NodeSignal(source, value, deleting,
                deleting ? "deletionTimestamp set (" + node.getMetadata().getDeletionTimestamp() + ")" : "");
    }

    /** The member entry of one Node: addresses per type (first of each type) and the gossip address. */
    public static GroupMember memberOf(Node node, int gossipPort) {
        Map<String, String> addresses = new LinkedHashMap<>();
        if (node.getStatus() != null && node.getStatus().getAddresses() != null) {
            for (NodeAddress address : node.getStatus().getAddresses()) {
                if (address.getType() != null && address.getAddress() != null && !address.getAddress().isBlank()) {
                    addresses.putIfAbsent(address.getType(), address.getAddress());
                }
            }
        }
        String host = addresses.get(GOSSIP_ADDRESS_TYPE);
        if (host == null) {
            host = addresses.get("ExternalIP");
        }
        String gossip = host == null ? "" : hostPort(host, gossipPort);
        return new GroupMember(node.getMetadata().getName(), gossip, addresses);
    }

    /** Signals for {@code node} as this group sees it: its own, or "left the group" when it is not labelled in. */
    public NodeSignal signalFor(String node) {
        NodeSignal signal = signals.get(node);
        return signal != null ? signal : NodeSignal.leftGroup(group);
    }

    /** True when the spec is present and resolved. */
    public boolean valid() {
        return policy != null;
    }

    /** T_stop of the resolved policy, or null when not resolved. */
    public Duration tStop() {
        return policy == null ? null : policy.timings().tStop();
    }

    /** Safe-to-assume-fenced delay of the resolved policy, or null when not resolved. */
    public Duration safeToAssumeFencedDelay() {
        return policy == null ? null : policy.timings().safeToAssumeFencedDelay();
    }

    /** A copy with other expected members (e.g. completed with per-network gossip addresses). */
    public GroupModel withExpected(SortedMap<String, GroupMember> members) {
        return new GroupModel(group, generation, fencingEnabled, members, signals, policy, violations);
    }

    static String hostPort(String host, int port) {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }
}
