package dev.fencing.nodemanager.escalation;

import dev.fencing.nodemanager.model.NodeAddressForm;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import java.net.InetAddress;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The last fence_kdump message per source address, as this replica received them; a node's sighting is the latest
 * from any of its Node addresses. Bounded: beyond {@link #MAX_SOURCES} addresses the oldest is forgotten, so a flood
 * of spoofed sources costs memory once and evicts only other unknown sources first in practice.
 */
public final class KdumpSightings {

    /** Most source addresses remembered. */
    static final int MAX_SOURCES = 4096;

    private final Map<String, Instant> last = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Instant> eldest) {
            return size() > MAX_SOURCES;
        }
    };

    /** A valid message from {@code source} arrived at {@code at}. */
    public synchronized void record(InetAddress source, Instant at) {
        last.put(source.getHostAddress(), at);
    }

    /** The latest message from any of {@code node}'s addresses ({@code status.addresses}). */
    public synchronized Optional<Instant> last(Node node) {
        Instant latest = null;
        if (node.getStatus() != null && node.getStatus().getAddresses() != null) {
            for (NodeAddress a : node.getStatus().getAddresses()) {
                Instant at = a.getAddress() == null ? null : last.get(NodeAddressForm.of(a.getAddress()));
                if (at != null && (latest == null || at.isAfter(latest))) {
                    latest = at;
                }
            }
        }
        return Optional.ofNullable(latest);
    }
}
