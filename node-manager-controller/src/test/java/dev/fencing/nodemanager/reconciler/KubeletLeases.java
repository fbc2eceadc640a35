package dev.fencing.nodemanager.reconciler;

import static org.awaitility.Awaitility.await;

import dev.fencing.nodemanager.NodeManager;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.concurrent.TimeUnit;

/** A kubelet's heartbeat Lease renewal, as operator tests on the CRUD mock stand in for kubelets. */
final class KubeletLeases {

    private KubeletLeases() {
    }

    /** The kubelet of {@code node} renewed its Lease at {@code at}; returns once the controller has seen it. */
    static void renewed(KubernetesClient client, NodeManager manager, String node, Instant at) {
        Lease lease = new LeaseBuilder().withNewMetadata().withName(node).withNamespace("kube-node-lease")
                .endMetadata().withNewSpec().withHolderIdentity(node).withLeaseDurationSeconds(40)
                .withRenewTime(ZonedDateTime.ofInstant(at, ZoneOffset.UTC)).endSpec().build();
        client.leases().inNamespace("kube-node-lease").resource(lease).createOr(e -> e.update());
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.nodeLeases().renewedAt(node)
                .filter(t -> !t.isBefore(at)).isPresent());
    }
}
