package dev.fencing.nodemanager.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LeaderLeaseWatchTest {

    private static final String ME = "me-1@10.0.0.1:9650";
    private final Instant wallNow = Instant.parse("2026-11-23T10:00:00Z");
    private final long nanoNow = 5_000_000_000_000L;
    private final List<Long> renewals = new ArrayList<>();
    private final LeaderLeaseWatch watch = new LeaderLeaseWatch(null, "ns", "l", ME, () -> wallNow, () -> nanoNow,
            renewals::add);

    private static Lease lease(String holder, Instant renewTime) {
        return new LeaseBuilder().withNewMetadata().withName("l").withNamespace("ns").endMetadata().withNewSpec()
                .withHolderIdentity(holder).withRenewTime(ZonedDateTime.ofInstant(renewTime, ZoneOffset.UTC))
                .endSpec().build();
    }

    @Test
    void aRenewalCountsFromWhenItWasSentNotFromWhenItsEventArrived() {
        // Written 20 s ago (just before a pause, say) and delivered only now.
        watch.observed(lease(ME, wallNow.minusSeconds(20)));
        assertThat(renewals).containsExactly(nanoNow - Duration.ofSeconds(20).toNanos());
    }

    @Test
    void anotherReplicasRenewalIsNotOurs() {
        watch.observed(lease("other-2@10.0.0.2:9650", wallNow));
        assertThat(renewals).isEmpty();
    }

    @Test
    void aRenewTimeAheadOfTheWallClockCountsAsNow() {
        watch.observed(lease(ME, wallNow.plusSeconds(5)));
        assertThat(renewals).containsExactly(nanoNow);
    }
}
