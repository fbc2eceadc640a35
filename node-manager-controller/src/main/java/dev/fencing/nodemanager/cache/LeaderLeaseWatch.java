package dev.fencing.nodemanager.cache;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * Watches this replica's leader-election Lease and reports, on the monotonic clock, each renewal this replica made
 * (holder = its identity). The tie-break arbiter grants only within the renew deadline of the latest one.
 *
 * <p>A renewal counts from when it was sent, never from when its watch event arrived: an event queued while the
 * process was paused arrives late, and counting from its arrival would make a stale renewal look fresh. The send
 * time is {@code spec.renewTime}, written with this replica's own wall clock by the elector; its age on that clock
 * is subtracted from the monotonic now. An age that comes out negative (the wall clock stepped back) counts as 0.
 */
public final class LeaderLeaseWatch implements AutoCloseable {

    private final KubernetesClient client;
    private final String namespace;
    private final String leaseName;
    private final String identity;
    private final InstantSource electorWallClock;
    private final LongSupplier nanoClock;
    private final LongConsumer renewed;
    private SharedIndexInformer<Lease> informer;

    /**
     * @param identity         this replica's leader-election identity (the Lease's holderIdentity while it leads)
     * @param electorWallClock the wall clock the elector writes renewTime with (the system clock)
     * @param nanoClock        monotonic clock shared with the arbiter
     * @param renewed          receives the monotonic time of each renewal by this replica
     */
    public LeaderLeaseWatch(KubernetesClient client, String namespace, String leaseName, String identity,
                            InstantSource electorWallClock, LongSupplier nanoClock, LongConsumer renewed) {
        this.client = client;
        this.namespace = namespace;
        this.leaseName = leaseName;
        this.identity = identity;
        this.electorWallClock = electorWallClock;
        this.nanoClock = nanoClock;
        this.renewed = renewed;
    }

    /** Starts the informer on the one Lease. */
    public LeaderLeaseWatch start() {
        informer = client.leases().inNamespace(namespace).withName(leaseName).runnableInformer(0);
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Lease lease) {
                observed(lease);
            }

            @Override
            public void onUpdate(Lease old, Lease lease) {
                observed(lease);
            }

            @Override
            public void onDelete(Lease lease, boolean unknownFinalState) {
                // Nothing renewed; the arbiter's deadline runs out on its own.
            }
        });
        informer.start().toCompletableFuture().join();
        return this;
    }

    /** One observed state of the Lease. */
    void observed(Lease lease) {
        if (lease.getSpec() == null || lease.getSpec().getRenewTime() == null
                || !identity.equals(lease.getSpec().getHolderIdentity())) {
            return;
        }
        renewed.accept(renewalNanos(nanoClock.getAsLong(), electorWallClock.instant(),
                lease.getSpec().getRenewTime().toInstant()));
    }

    /** The monotonic time of a renewal sent at {@code renewTime} (wall), seen at {@code nanoNow} / {@code wallNow}. */
    static long renewalNanos(long nanoNow, Instant wallNow, Instant renewTime) {
        long ago = Duration.between(renewTime, wallNow).toNanos();
        return nanoNow - Math.max(0, ago);
    }

    @Override
    public void close() {
        if (informer != null) {
            informer.close();
        }
    }
}
