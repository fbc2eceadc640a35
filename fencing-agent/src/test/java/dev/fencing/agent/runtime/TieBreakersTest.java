package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.agent.quorum.LowestNameTieBreaker;
import dev.fencing.agent.quorum.TieBreaker;
import dev.fencing.policy.TieBreakerKind;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class TieBreakersTest {

  @Test
  void everyAcceptedKindAnswersForRealAndOthersRejectTheConfig() {
    TieBreaker controlPlane = new LowestNameTieBreaker();
    assertThat(TieBreakers.of(List.of(TieBreakerKind.CONTROL_PLANE, TieBreakerKind.LOWEST_NAME),
        Optional.of(controlPlane), Optional.empty(), Optional.empty())).first().isSameAs(controlPlane);
    assertThatThrownBy(() -> TieBreakers.of(List.of(TieBreakerKind.DISK), Optional.empty(), Optional.empty(), Optional.empty()))
        .hasMessageContaining("Disk needs disk.device").hasMessageContaining("'sbd -d DEVICE -4 90 create'");
    assertThatThrownBy(() -> TieBreakers.of(List.of(TieBreakerKind.CONTROL_PLANE), Optional.empty(), Optional.empty(),
        Optional.empty())).hasMessageContaining("--controller");
    assertThatThrownBy(() -> TieBreakers.of(List.of(TieBreakerKind.API_REACHABLE), Optional.empty(), Optional.empty(),
        Optional.empty())).hasMessageContaining("API server probe");
  }
}
