package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.agent.watchdog.WatchdogStatus;
import dev.fencing.proto.fencing.v1.DisarmReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link ReportScheduler} on a {@link ManualScheduler}: when reports go out, and that an idle agent is not woken. */
class ReportSchedulerTest {

  private static final Duration EVERY = Duration.ofSeconds(10);
  private static final Duration SPACING = Duration.ofMillis(500);
  private static final long MS = 1_000_000L;

  private final ManualScheduler executor = new ManualScheduler();
  private final AtomicReference<AgentSnapshot> current = new AtomicReference<>();
  private final List<AgentSnapshot> sent = new ArrayList<>();
  private final List<Long> sentAt = new ArrayList<>();
  private ReportScheduler reports;

  private static AgentSnapshot snapshot(boolean armed, List<DisarmReason> reasons, boolean isolated,
      String condition) {
    WatchdogStatus status = new WatchdogStatus(armed, false, isolated, reasons, OptionalLong.empty(), 0, condition,
        Optional.empty(), false);
    return new AgentSnapshot("node-a", "test", 0, Optional.empty(), Optional.empty(), status, List.of(), 0, isolated);
  }

  private static AgentSnapshot armed() {
    return snapshot(true, List.of(), false, "ok");
  }

  private static DisarmReason reason(DisarmReason.Kind kind, String detail) {
    return DisarmReason.newBuilder().setKind(kind).setDetail(detail).build();
  }

  /** The quorum loop's tick: the agent's snapshot becomes {@code s} and the listener sees it. */
  private void tick(AgentSnapshot s) {
    current.set(s);
    reports.onTick(s);
  }

  @BeforeEach
  void start() {
    current.set(armed());
    reports = new ReportScheduler(executor, executor::nanoTime, current::get, s -> {
      sent.add(s);
      sentAt.add(executor.nanoTime());
    }, EVERY, SPACING, "node=node-a");
    reports.start();
    executor.runDue();
    assertThat(sent).as("the first report goes out at start").hasSize(1);
  }

  @Test
  void anIdleAgentReportsEveryTenSecondsAndItsSenderWakesForNothingElse() {
    for (int i = 0; i < 300; i++) {
      executor.advance(100 * MS);
      tick(armed());
    }
    // 30 s of ticks with an unchanged snapshot: the refreshes at 10, 20 and 30 s, nothing else.
    assertThat(sentAt).containsExactly(0L, 10_000 * MS, 20_000 * MS, 30_000 * MS);
    assertThat(executor.pending()).as("only the next refresh waits").isEqualTo(1);
  }

  @Test
  void aDisarmIsReportedFromTheTickThatMadeItEvenRightAfterAnotherReport() {
    executor.advance(100 * MS);
    tick(snapshot(false, List.of(reason(DisarmReason.Kind.KIND_DISABLE_FILE, "maintenance")), false, "ok"));
    executor.runDue();

    assertThat(sent).hasSize(2);
    assertThat(sent.get(1).watchdog().armed()).isFalse();
    assertThat(sentAt.get(1)).isEqualTo(100 * MS);
  }

  @Test
  void otherChangesWaitForTheSpacingAndThenCarryTheLatestSnapshot() {
    executor.advance(100 * MS);
    tick(snapshot(true, List.of(), true, "ok"));
    executor.runDue();
    assertThat(sent).as("an isolated flag 100 ms after the last report waits").hasSize(1);

    executor.advance(200 * MS);
    tick(snapshot(true, List.of(), true, "keepalive failed"));
    executor.advance(199 * MS);
    assertThat(sent).hasSize(1);

    executor.advance(1 * MS);
    assertThat(sent).as("one report when the spacing allows").hasSize(2);
    assertThat(sentAt.get(1)).isEqualTo(500 * MS);
    assertThat(sent.get(1).isolated()).isTrue();
    assertThat(sent.get(1).watchdog().condition()).isEqualTo("keepalive failed");

    executor.advance(10_000 * MS);
    assertThat(sentAt).as("the refresh counts from the latest report").containsExactly(0L, 500 * MS, 10_500 * MS);
  }

  @Test
  void theArmingDelaysDetailChangingEveryTickIsReportedAtMostTwiceASecond() {
    executor.advance(100 * MS);
    for (int i = 0; i < 30; i++) {
      tick(snapshot(false, List.of(reason(DisarmReason.Kind.KIND_ARMING_DELAY, (3000 - 100 * i) + "ms left")),
          false, "ok"));
      executor.advance(100 * MS);
    }
    // The first arming-delay report is a change of kind (at once); then the detail alone: every 500 ms at most.
    assertThat(sentAt.subList(1, sentAt.size())).containsExactly(100 * MS, 600 * MS, 1100 * MS, 1600 * MS,
        2100 * MS, 2600 * MS, 3100 * MS);
  }

  @Test
  void aChangeUndoneBeforeItsTurnSendsNothingExtra() {
    executor.advance(100 * MS);
    tick(snapshot(true, List.of(), true, "ok"));
    executor.advance(100 * MS);
    tick(armed());
    executor.advance(1000 * MS);

    assertThat(sent).hasSize(1);
  }

  @Test
  void aFailingSendIsLoggedAndTheRefreshStillComes() {
    List<Long> attempts = new ArrayList<>();
    ManualScheduler own = new ManualScheduler();
    ReportScheduler failing = new ReportScheduler(own, own::nanoTime, ReportSchedulerTest::armed, s -> {
      attempts.add(own.nanoTime());
      throw new IllegalStateException("stream closed");
    }, EVERY, SPACING, "node=node-a");
    failing.start();
    own.advance(25_000 * MS);

    assertThat(attempts).containsExactly(0L, 10_000 * MS, 20_000 * MS);
  }

  @Test
  void nothingIsScheduledAfterTheExecutorStops() {
    executor.shutdownNow();
    tick(snapshot(false, List.of(reason(DisarmReason.Kind.KIND_DISABLE_FILE, "x")), false, "ok"));

    assertThat(executor.pending()).isZero();
    assertThat(sent).hasSize(1);
  }

  @Test
  void intervalsMustBePositiveAndTheSpacingNoLongerThanTheRefresh() {
    assertThatThrownBy(() -> new ReportScheduler(executor, executor::nanoTime, current::get, s -> { },
        Duration.ofMillis(100), Duration.ofSeconds(1), "node=node-a"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("minSpacing <= every");
    assertThatThrownBy(() -> new ReportScheduler(executor, executor::nanoTime, current::get, s -> { },
        Duration.ofSeconds(1), Duration.ZERO, "node=node-a"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
