package dev.fencing.e2e.netns;

import java.util.List;

/**
 * One node of a lab: its own network namespace with one veth ({@code eth0}) into the lab's bridge.
 *
 * @param name      the node's name in tests (e.g. {@code node-1})
 * @param index     0-based position, used for interface and namespace names
 * @param namespace the network namespace name
 * @param address   its IPv4 address, in 198.18.0.0/15
 */
public record LabNode(String name, int index, String namespace, String address) {

    /**
     * The prefix that runs a command inside this node's namespace, at nice -10: a node's processes (agent, emulated
     * watchdog, kubelet stand-in, peers) take the CPU before the harness, the control plane and the build, as a
     * real node's agent does not share its cores with the next lab's JVMs starting up. Two e2e JVMs run labs at once
     * on two cores; without this a neighbour's start-up burst can starve an agent past a short quorum window.
     *
     * @return {@code nice -n -10 ip netns exec <namespace>}
     */
    public List<String> execPrefix() {
        return List.of("nice", "-n", "-10", "ip", "netns", "exec", namespace);
    }
}
