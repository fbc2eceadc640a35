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

    /** @return the prefix that runs a command inside this node's namespace */
    public List<String> execPrefix() {
        return List.of("ip", "netns", "exec", namespace);
    }
}
