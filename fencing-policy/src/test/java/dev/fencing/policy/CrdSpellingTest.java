package dev.fencing.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CrdSpellingTest {

    @Test
    void everyEnumParsesItsOwnCrdSpelling() {
        for (Mode v : Mode.values()) {
            assertThat(Mode.parse(v.crdValue())).isEqualTo(v);
        }
        for (QuorumLossAction v : QuorumLossAction.values()) {
            assertThat(QuorumLossAction.parse(v.crdValue())).isEqualTo(v);
        }
        for (Profile v : Profile.values()) {
            assertThat(Profile.parse(v.crdValue())).isEqualTo(v);
        }
        for (TieBreakerKind v : TieBreakerKind.values()) {
            assertThat(TieBreakerKind.parse(v.crdValue())).isEqualTo(v);
        }
    }

    @Test
    void crdSpellingsAreThoseOfTheNodeGroupContract() {
        assertThat(Mode.parse("Watchdog")).isEqualTo(Mode.WATCHDOG);
        assertThat(Mode.parse("Notify")).isEqualTo(Mode.NOTIFY);
        assertThat(QuorumLossAction.parse("Fence")).isEqualTo(QuorumLossAction.FENCE);
        assertThat(QuorumLossAction.parse("Exclude")).isEqualTo(QuorumLossAction.EXCLUDE);
        assertThat(QuorumLossAction.parse("Wait")).isEqualTo(QuorumLossAction.WAIT);
        assertThat(Profile.parse("Auto")).isEqualTo(Profile.AUTO);
        assertThat(Profile.parse("Critical")).isEqualTo(Profile.CRITICAL);
        assertThat(Profile.parse("Medium")).isEqualTo(Profile.MEDIUM);
        assertThat(Profile.parse("Moderate")).isEqualTo(Profile.MODERATE);
        assertThat(Profile.parse("Slow")).isEqualTo(Profile.SLOW);
        assertThat(TieBreakerKind.parse("ControlPlane")).isEqualTo(TieBreakerKind.CONTROL_PLANE);
        assertThat(TieBreakerKind.parse("LowestName")).isEqualTo(TieBreakerKind.LOWEST_NAME);
        assertThat(TieBreakerKind.parse("Disk")).isEqualTo(TieBreakerKind.DISK);
        assertThat(TieBreakerKind.parse("APIReachable")).isEqualTo(TieBreakerKind.API_REACHABLE);
    }

    @Test
    void unknownValueNamesTheAllowedOnes() {
        assertThatThrownBy(() -> TieBreakerKind.parse("Quorum"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("tie-breaker 'Quorum' is not known; use one of ControlPlane, LowestName, Disk, APIReachable");
    }

    @Test
    void wrongCaseSuggestsTheCrdSpelling() {
        assertThatThrownBy(() -> Mode.parse("watchdog"))
                .hasMessage("fencing mode 'watchdog' is not spelled as the CRD expects; write 'Watchdog'");
    }

    @Test
    void missingValueNamesTheAllowedOnes() {
        assertThatThrownBy(() -> Profile.parse(null))
                .hasMessage("profile is missing; use one of Auto, Critical, Medium, Moderate, Slow");
    }

    @Test
    void onlyApiReachableIsNotSplitBrainSafe() {
        assertThat(TieBreakerKind.values()).filteredOn(k -> !k.splitBrainSafe())
                .containsExactly(TieBreakerKind.API_REACHABLE);
    }
}
