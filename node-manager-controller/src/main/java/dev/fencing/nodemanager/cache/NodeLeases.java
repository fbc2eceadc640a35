package dev.fencing.nodemanager.cache;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * When each kubelet last renewed its heartbeat Lease ({@code kube-node-lease/<node>}), as this replica knows it.
 * A renewal counts from the later of its {@code spec.renewTime} (the kubelet's wall clock) and the instant this
 * replica first saw that renewTime (its own clock; Kubernetes' node lifecycle controller uses its observation time
 * alone): a kubelet whose clock runs behind, or a renewal seen late, can then only make a node look alive longer,
 * never dead sooner. A kubelet clock that runs ahead by Δ makes its last renewal count Δ later: it delays the record
 * (and the taint) by Δ, which is the safe direction.
 * Fed by {@link ClusterCache}'s Lease informer; pure otherwise.
 */
public final class NodeLeases {

    /** Namespace of the kubelets' heartbeat Leases. */
    public static final String NAMESPACE = "kube-node-lease";

    private record Seen(Instant renewTime, Instant renewedAt) {
    }

    private final InstantSource clock;
    private final Map<String, Seen> seen = new ConcurrentHashMap<>();

    /** @param clock this replica's wall clock (the one status decisions use) */
    public NodeLeases(InstantSource clock) {
        this.clock = clock;
    }

    /** A Lease was added or updated. */
    public void observed(Lease lease) {
        String node = lease.getMetadata().getName();
        if (lease.getSpec() == null || lease.getSpec().getRenewTime() == null) {
            return;
        }
        Instant renewTime = lease.getSpec().getRenewTime().toInstant();
        seen.compute(node, (n, before) -> {
            if (before != null && before.renewTime().equals(renewTime)) {
                return before;
            }
            Instant firstSeen = clock.instant();
            return new Seen(renewTime, renewTime.isAfter(firstSeen) ? renewTime : firstSeen);
        });
    }

    /** A Lease was deleted: the node's renewals are no longer known. */
    public void deleted(Lease lease) {
        seen.remove(lease.getMetadata().getName());
    }

    /** When {@code node}'s kubelet last renewed its Lease; empty when this replica has seen no renewal. */
    public Optional<Instant> renewedAt(String node) {
        return Optional.ofNullable(seen.get(node)).map(Seen::renewedAt);
    }
}
