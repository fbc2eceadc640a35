package dev.fencing.nodemanager.stream;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.policy.MemberSetDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ServedMemberSetsTest {
    private final Instant t0 = Instant.parse("2026-11-30T10:00:00Z");
    private final ServedMemberSets sets = new ServedMemberSets();

    @Test
    void aSetIsFoundByTheDigestAgentsReportAndServedUntilTheNextOneReplacesIt() {
        sets.record(Set.of("a", "b", "c"), t0);
        sets.record(Set.of("a", "b", "c"), t0.plusSeconds(5));
        sets.record(Set.of("a", "b", "c", "d"), t0.plusSeconds(60));

        assertThat(sets.byDigest(MemberSetDigest.of(Set.of("c", "b", "a")))).contains(Set.of("a", "b", "c"));
        assertThat(sets.byDigest(MemberSetDigest.of(Set.of("a", "b")))).isEmpty();
        // Recording the served set again does not restart it: it was served from t0 to t0 + 60 s.
        assertThat(sets.servedSince(t0.plusSeconds(60))).containsExactly(Set.of("a", "b", "c"),
                Set.of("a", "b", "c", "d"));
        assertThat(sets.servedSince(t0.plusSeconds(61))).containsExactly(Set.of("a", "b", "c", "d"));
        assertThat(sets.servedSince(t0.plus(Duration.ofDays(1)))).as("the newest is served now")
                .containsExactly(Set.of("a", "b", "c", "d"));
    }

    @Test
    void onlyTheNewestSetsAreKeptAndACopyDoesNotFollowLaterRecords() {
        for (int i = 0; i < ServedMemberSets.LIMIT + 3; i++) {
            sets.record(Set.of("node-" + i), t0.plusSeconds(i));
        }
        assertThat(sets.byDigest(MemberSetDigest.of(Set.of("node-2")))).as("dropped").isEmpty();
        assertThat(sets.byDigest(MemberSetDigest.of(Set.of("node-3")))).as("kept").isPresent();
        assertThat(sets.servedSince(t0)).hasSize(ServedMemberSets.LIMIT);

        ServedMemberSets copy = sets.copy();
        sets.record(Set.of("later"), t0.plusSeconds(100));
        assertThat(copy.byDigest(MemberSetDigest.of(Set.of("later")))).isEmpty();
        assertThat(copy.servedSince(t0.plusSeconds(100))).containsExactly(Set.of("node-" + (ServedMemberSets.LIMIT + 2)));
    }
}
