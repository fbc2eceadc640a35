package dev.fencing.memberlist.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.memberlist.sim.VirtualTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SuspicionTest {
  private static final long S = 1_000_000_000L;
  private static final long MS = 1_000_000L;

  @ParameterizedTest(name = "n={0}: min timeout with SuspicionMult 3 is 3 x {1} ms")
  @CsvSource({"1, 1000", "5, 1000", "10, 1000", "50, 1698", "100, 2000", "500, 2698", "1000, 3000"})
  void minTimeoutScalesWithLog10OfClusterSizeTruncatedToMillis(int n, long scaleMillis) {
    assertThat(Suspicion.minTimeoutNanos(3, n, S)).isEqualTo(3 * scaleMillis * MS);
  }

  @Test
  void lanNumbersMatchTheWorkedExample() {
    // SuspicionMult 4, SuspicionMaxTimeoutMult 6, ProbeInterval 1s
    assertThat(Suspicion.minTimeoutNanos(4, 8, S)).isEqualTo(4 * S);
    assertThat(Suspicion.minTimeoutNanos(4, 100, S)).isEqualTo(8 * S);
    assertThat(Suspicion.minTimeoutNanos(4, 1000, S)).isEqualTo(12 * S);
    assertThat(Suspicion.confirmationsWanted(4, 8)).isEqualTo(2);
    assertThat(Suspicion.confirmationsWanted(4, 3)).isZero();
    assertThat(Suspicion.confirmationsWanted(4, 4)).isEqualTo(2);
    assertThat(Suspicion.remainingNanos(1, 2, 0, 4 * S, 24 * S)).isEqualTo(11_381 * MS);
    assertThat(Suspicion.remainingNanos(2, 2, 0, 4 * S, 24 * S)).isEqualTo(4 * S);
  }

  @ParameterizedTest(name = "n={0} k={1} elapsed={2}ms -> {3}ms")
  @CsvSource({
    "0, 3, 0, 30000",
    "1, 3, 2000, 14000",
    "2, 3, 3000, 4810",
    "3, 3, 4000, -2000",
    "4, 3, 5000, -3000",
    "5, 3, 10000, -8000"
  })
  void remainingTimeShrinksLogarithmicallyWithConfirmations(int n, int k, long elapsedMs, long expectedMs) {
    assertThat(Suspicion.remainingNanos(n, k, elapsedMs * MS, 2 * S, 30 * S)).isEqualTo(expectedMs * MS);
  }

  @Test
  void timerStartsAtMaxAndShrinksWithIndependentConfirmations() {
    VirtualTime time = new VirtualTime();
    List<Long> firedAt = new ArrayList<>();
    List<Integer> confirmations = new ArrayList<>();
    Suspicion s =
        new Suspicion(time, time, "accuser", 2, 4 * S, 24 * S, c -> {
          firedAt.add(time.nanos());
          confirmations.add(c);
        });

    time.runUntil(2 * S);
    assertThat(s.confirm("accuser")).as("the first accuser is not a confirmation").isFalse();
    assertThat(s.confirm("b")).isTrue();
    assertThat(s.confirm("b")).as("duplicate").isFalse();
    time.runUntil(11 * S);
    assertThat(firedAt).isEmpty();
    time.runUntil(11_381 * MS);
    assertThat(firedAt).containsExactly(11_381 * MS);
    assertThat(confirmations).containsExactly(1);
    assertThat(s.confirm("c")).as("after firing").isFalse();
  }

  @Test
  void enoughConfirmationsFireAtMinOrImmediately() {
    VirtualTime time = new VirtualTime();
    List<Long> firedAt = new ArrayList<>();
    Suspicion s = new Suspicion(time, time, "a", 2, 4 * S, 24 * S, c -> firedAt.add(time.nanos()));
    time.runUntil(5 * S);
    s.confirm("b");
    s.confirm("c");
    assertThat(s.confirm("d")).as("k reached").isFalse();
    time.runUntil(5 * S);
    assertThat(firedAt).containsExactly(5 * S);
  }

  @Test
  void withoutConfirmationsWantedTheTimeoutIsMin() {
    VirtualTime time = new VirtualTime();
    List<Long> firedAt = new ArrayList<>();
    new Suspicion(time, time, "a", 0, 4 * S, 24 * S, c -> firedAt.add(time.nanos()));
    time.runUntil(30 * S);
    assertThat(firedAt).containsExactly(4 * S);
  }

  @Test
  void cancelledSuspicionNeverFires() {
    VirtualTime time = new VirtualTime();
    List<Long> firedAt = new ArrayList<>();
    Suspicion s = new Suspicion(time, time, "a", 2, 4 * S, 24 * S, c -> firedAt.add(time.nanos()));
    time.runUntil(S);
    s.cancel();
    time.runUntil(60 * S);
    assertThat(firedAt).isEmpty();
  }
}
