package dev.fencing.memberlist.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.memberlist.sim.VirtualTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PeriodicTimerTest {
  static final long MS = 1_000_000L;

  final VirtualTime time = new VirtualTime();
  final List<Long> ticks = new ArrayList<>();

  @Test
  void aSleepingTimerDoesNotTickAndWakesOnItsOwnGrid() {
    PeriodicTimer[] timer = new PeriodicTimer[1];
    timer[0] = PeriodicTimer.start(time, time, 30 * MS, 200 * MS, () -> {
      ticks.add(time.nanos() / MS);
      if (ticks.size() == 3) {
        timer[0].sleep();
      }
    });
    time.runUntil(1_000 * MS);
    assertThat(ticks).containsExactly(30L, 230L, 430L);
    assertThat(timer[0].sleeping()).isTrue();
    long eventsAsleep = time.eventsRun();
    time.runUntil(2_000 * MS);
    assertThat(time.eventsRun()).as("nothing scheduled while asleep").isEqualTo(eventsAsleep);

    timer[0].wake();
    timer[0].wake();
    assertThat(timer[0].sleeping()).isFalse();
    time.runUntil(2_500 * MS);
    assertThat(ticks).as("430 + 8 x 200 is the first grid point after 2 000; a second wake adds no tick")
        .containsExactly(30L, 230L, 430L, 2_030L, 2_230L, 2_430L);
  }

  @Test
  void wakingAnAwakeTimerChangesNothingAndACancelledTimerStaysQuiet() {
    PeriodicTimer timer = PeriodicTimer.start(time, time, 0, 100 * MS, () -> ticks.add(time.nanos() / MS));
    time.runUntil(150 * MS);
    timer.wake();
    time.runUntil(350 * MS);
    assertThat(ticks).containsExactly(0L, 100L, 200L, 300L);

    timer.sleep();
    timer.cancel();
    timer.wake();
    time.runUntil(1_000 * MS);
    assertThat(ticks).containsExactly(0L, 100L, 200L, 300L);
  }
}
