package dev.fencing.memberlist.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class AwarenessTest {

  @Test
  void scoreSaturatesBetweenZeroAndMaxMinusOne() {
    Awareness a = new Awareness(8);
    a.applyDelta(-3);
    assertThat(a.healthScore()).isZero();
    a.applyDelta(5);
    assertThat(a.healthScore()).isEqualTo(5);
    a.applyDelta(10);
    assertThat(a.healthScore()).isEqualTo(7);
    a.applyDelta(-1);
    assertThat(a.healthScore()).isEqualTo(6);
  }

  @Test
  void timeoutScalesWithScorePlusOne() {
    Awareness a = new Awareness(8);
    assertThat(a.scaleTimeout(1_000_000_000L)).isEqualTo(1_000_000_000L);
    a.applyDelta(3);
    assertThat(a.scaleTimeout(1_000_000_000L)).isEqualTo(4_000_000_000L);
    a.applyDelta(100);
    assertThat(a.scaleTimeout(1_000_000_000L)).isEqualTo(8_000_000_000L);
  }

  @Test
  void maxOfOneDisablesSelfAwareness() {
    Awareness a = new Awareness(1);
    a.applyDelta(4);
    assertThat(a.healthScore()).isZero();
    assertThat(a.scaleTimeout(500)).isEqualTo(500);
  }

  @Test
  void rejectsMaxBelowOne() {
    assertThatThrownBy(() -> new Awareness(0)).isInstanceOf(IllegalArgumentException.class);
  }
}
