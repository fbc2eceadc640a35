package dev.fencing.agent.watchdog;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.quorum.QuorumVerdict;
import dev.fencing.policy.Mode;
import dev.fencing.policy.QuorumLossAction;
import dev.fencing.proto.fencing.v1.DisarmReason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Arming rules, feeding and disarming on a fake clock (one tick = 100 ms); the feeder thread is played by a
 * {@link WatchdogFeeder#feedIfDue()} step after every tick.
 */
class WatchdogSupervisorTest {

  static final long MS = 1_000_000L;
  static final long TICK = 100 * MS;

  long now = 1_000 * MS;
  final RecordingWatchdogDevice device = new RecordingWatchdogDevice();
  final WatchdogFeeder feeder = feeder(device);
  final WatchdogSupervisor supervisor = new WatchdogSupervisor(feeder, Duration.ofSeconds(5), "node=a group=g");

  WatchdogFeeder feeder(WatchdogDevice device) {
    return new WatchdogFeeder(device, () -> now, "node=a group=g");
  }

  static ArmingConditions conditions(Mode mode, QuorumLossAction action) {
    return new ArmingConditions(true, mode, action, Duration.ofSeconds(10), Duration.ofSeconds(2),
        Duration.ofMillis(500), Optional.empty(), Optional.empty(), Optional.empty());
  }

  static final ArmingConditions FENCE = conditions(Mode.WATCHDOG, QuorumLossAction.FENCE);

  QuorumVerdict verdict(boolean held) {
    return new QuorumVerdict(held, now, held ? now + TICK : now, 3, held ? 2 : 1, 2, new TreeSet<>(List.of("a")),
        "none", 2_000 * MS, 0, List.of());
  }

  /** A fresh supervisor on {@code feeds}, ticked 21 times with quorum held: past the 2 s arming delay. */
  WatchdogSupervisor armedFor21Ticks(WatchdogFeeder feeds, ArmingConditions conditions) {
    WatchdogSupervisor sup = new WatchdogSupervisor(feeds, Duration.ofSeconds(5), "node=a group=g");
    for (int i = 0; i < 21; i++) {
      now += TICK;
      sup.tick(now, verdict(true), conditions);
      feeds.feedIfDue();
    }
    return sup;
  }

  WatchdogStatus run(int ticks, boolean held, ArmingConditions conditions) {
    WatchdogStatus status = null;
    for (int i = 0; i < ticks; i++) {
      now += TICK;
      status = supervisor.tick(now, verdict(held), conditions);
      feeder.feedIfDue();
    }
    return status;
  }

  static ArmingConditions withTimeout(Duration timeout, Duration feedInterval) {
    return new ArmingConditions(true, Mode.WATCHDOG, QuorumLossAction.FENCE, timeout, Duration.ofSeconds(2),
        feedInterval, Optional.empty(), Optional.empty(), Optional.empty());
  }

  /**
   * A new watchdog timeout reaches an armed agent: the device is closed with the magic character and opened again
   * with it at once, so the timer never runs with the old timeout against the new feed interval (raised), nor longer
   * than the controller counts on (lowered).
   */
  @Test
  void aNewWatchdogTimeoutIsAppliedToTheArmedDevice() {
    ArmingConditions two = withTimeout(Duration.ofSeconds(2), Duration.ofMillis(200));
    run(21, true, two);
    assertThat(device.events()).containsExactly("open 2s");

    ArmingConditions thirty = withTimeout(Duration.ofSeconds(30), Duration.ofSeconds(3));
    WatchdogStatus status = run(1, true, thirty);
    assertThat(status.armed()).isTrue();
    assertThat(status.deviceTimeout()).contains(Duration.ofSeconds(30));
    assertThat(device.events()).containsSubsequence("open 2s", "magic-close", "open 30s");
    run(5, true, thirty);
    assertThat(device.events().stream().filter(e -> e.startsWith("open"))).as("once").hasSize(2);

    WatchdogStatus lowered = run(1, true, two);
    assertThat(lowered.deviceTimeout()).contains(Duration.ofSeconds(2));
    assertThat(device.events()).endsWith("magic-close", "open 2s");
  }

  /** Without quorum under Fence the node is fencing: a new timeout must not restart the timer it runs out on. */
  @Test
  void aNewWatchdogTimeoutDoesNotTouchADeviceThatIsRunningOut() {
    ArmingConditions two = withTimeout(Duration.ofSeconds(2), Duration.ofMillis(200));
    run(21, true, two);
    run(1, false, two);
    run(3, false, withTimeout(Duration.ofSeconds(30), Duration.ofSeconds(3)));
    assertThat(device.events()).doesNotContain("magic-close").filteredOn(e -> e.startsWith("open"))
        .containsExactly("open 2s");
  }

  /** errno EIO: what a driver's failed ping returns to the write of the magic character. */
  static final int EIO = 5;

  /** A {@link LinuxWatchdogDevice} on a fake libc, at a path that exists (so no presence problem) under {@code dir}. */
  static LinuxWatchdogDevice linuxDevice(Path dir, RecordingLibc libc) throws IOException {
    Path node = Files.createFile(dir.resolve("watchdog"));
    return new LinuxWatchdogDevice(node, libc, new NowayoutProbe(dir));
  }

  /**
   * The magic close of a retime fails (the 'V' write): the device closes its descriptor anyway and its timer may still
   * run. The supervisor opens it again at once with the new timeout and feeds it; it never reports armed while the
   * device is closed.
   */
  @Test
  void aFailedMagicCloseWhileRetimingReopensTheDeviceWithTheNewTimeout(@TempDir Path dir) throws IOException {
    RecordingLibc libc = new RecordingLibc();
    LinuxWatchdogDevice linux = linuxDevice(dir, libc);
    WatchdogFeeder feeds = feeder(linux);
    WatchdogSupervisor sup = armedFor21Ticks(feeds, withTimeout(Duration.ofSeconds(2), Duration.ofMillis(200)));
    assertThat(sup.status().armed()).isTrue();
    assertThat(linux.isOpen()).isTrue();

    libc.writeErrno = EIO;
    ArmingConditions thirty = withTimeout(Duration.ofSeconds(30), Duration.ofSeconds(3));
    for (int i = 0; i < 40; i++) {
      now += TICK;
      WatchdogStatus status = sup.tick(now, verdict(true), thirty);
      feeds.feedIfDue();
      assertThat(status.armed() && !linux.isOpen()).as("armed with a closed device at tick %d", i).isFalse();
    }
    assertThat(linux.isOpen()).isTrue();
    assertThat(sup.status().armed()).isTrue();
    assertThat(sup.status().deviceTimeout()).contains(Duration.ofSeconds(30));
    assertThat(libc.calls).containsSubsequence("write V", "close", "open " + dir.resolve("watchdog") + " flags=0x80801",
        "ioctl SETTIMEOUT 30");
    assertThat(feeds.keepaliveFailure()).as("keepalives reach the reopened device").isEmpty();
  }

  /**
   * The magic close of a retime fails and so does the open after it: the supervisor is disarmed, says the device is
   * unavailable, and re-arms through the normal path once the device opens again.
   */
  @Test
  void aFailedMagicCloseWhileRetimingThatCannotReopenReportsTheDeviceUnavailable(@TempDir Path dir)
      throws IOException {
    RecordingLibc libc = new RecordingLibc();
    LinuxWatchdogDevice linux = linuxDevice(dir, libc);
    WatchdogFeeder feeds = feeder(linux);
    WatchdogSupervisor sup = armedFor21Ticks(feeds, withTimeout(Duration.ofSeconds(2), Duration.ofMillis(200)));
    assertThat(sup.status().armed()).isTrue();

    libc.writeErrno = EIO;
    libc.openErrno = Libc.EBUSY;
    ArmingConditions thirty = withTimeout(Duration.ofSeconds(30), Duration.ofSeconds(3));
    now += TICK;
    WatchdogStatus status = sup.tick(now, verdict(true), thirty);
    feeds.feedIfDue();
    assertThat(linux.isOpen()).isFalse();
    assertThat(status.armed()).isFalse();
    assertThat(status.deviceUnavailable()).isTrue();
    assertThat(status.condition()).startsWith("busy:");
    assertThat(status.disarmReasons()).extracting(DisarmReason::getKind)
        .containsExactly(DisarmReason.Kind.KIND_WATCHDOG_UNAVAILABLE);

    libc.writeErrno = 0;
    libc.openErrno = 0;
    for (int i = 0; i < 51 && !status.armed(); i++) {
      now += TICK;
      status = sup.tick(now, verdict(true), thirty);
      feeds.feedIfDue();
    }
    assertThat(status.armed()).as("re-armed after the reopen backoff").isTrue();
    assertThat(linux.isOpen()).isTrue();
    assertThat(status.deviceTimeout()).contains(Duration.ofSeconds(30));
  }

  @Test
  void armsOnlyAfterQuorumHeldContinuouslyForTheArmingDelay() {
    WatchdogStatus status = run(19, true, FENCE);
    assertThat(status.armed()).isFalse();
    assertThat(status.disarmReasons()).extracting(DisarmReason::getKind)
        .containsExactly(DisarmReason.Kind.KIND_ARMING_DELAY);
    run(5, false, FENCE);
    assertThat(run(19, true, FENCE).armed()).as("a quorum dip restarts the arming delay").isFalse();
    status = run(2, true, FENCE);
    assertThat(status.armed()).isTrue();
    assertThat(status.disarmReasons()).isEmpty();
    assertThat(device.events()).containsExactly("open 10s");
  }

  @Test
  void aNodeThatBootsIntoAMinorityNeverArms() {
    WatchdogStatus status = run(600, false, FENCE);
    assertThat(status.armed()).isFalse();
    assertThat(device.events()).isEmpty();
    assertThat(status.disarmReasons()).extracting(DisarmReason::getDetail).containsExactly("quorum not held");
  }

  @Test
  void feedsEveryFeedIntervalWhileQuorumHolds() {
    run(21, true, FENCE);
    run(50, true, FENCE);
    assertThat(device.keepalives()).isEqualTo(10);
    assertThat(feeder.feedsTotal()).as("the open counts as a feed").isEqualTo(11);
  }

  @Test
  void fenceStopsFeedingForGoodWhenQuorumIsLost() {
    run(21, true, FENCE);
    long feeds = device.keepalives();
    WatchdogStatus status = run(3, false, FENCE);
    assertThat(status.armed()).isTrue();
    assertThat(status.fencingInProgress()).isTrue();
    run(50, true, FENCE);
    assertThat(device.keepalives()).as("no feed after quorum loss, even when quorum returns").isEqualTo(feeds);
    assertThat(device.events()).doesNotContain("magic-close");
  }

  @Test
  void aPoisonPillStopsFeedingAtOnceUnderEveryActionWhileQuorumHolds() {
    for (QuorumLossAction action : QuorumLossAction.values()) {
      RecordingWatchdogDevice d = new RecordingWatchdogDevice();
      WatchdogFeeder f = feeder(d);
      ArmingConditions healthy = conditions(Mode.WATCHDOG, action);
      WatchdogSupervisor s = armedFor21Ticks(f, healthy);
      assertThat(s.status().armed()).as(action.name()).isTrue();
      long feeds = d.keepalives();
      ArmingConditions pill = healthy.withPoisonPill(Optional.of("reset from vm"));
      WatchdogStatus status = null;
      for (int i = 0; i < 20; i++) {
        now += TICK;
        status = s.tick(now, verdict(true), i < 10 ? pill : healthy);
        f.feedIfDue();
      }
      assertThat(status.fencingInProgress()).as(action.name()).isTrue();
      assertThat(d.keepalives()).as("no feed after the pill, even once it is cleared: %s", action).isEqualTo(feeds);
      assertThat(d.events()).doesNotContain("magic-close");
    }
  }

  @Test
  void aPoisonPillKeepsADisarmedNodeFromArmingUntilCleared() {
    ArmingConditions pill = FENCE.withPoisonPill(Optional.of("off from controller"));
    WatchdogStatus status = run(40, true, pill);
    assertThat(status.armed()).isFalse();
    assertThat(status.disarmReasons()).extracting(DisarmReason::getKind)
        .containsExactly(DisarmReason.Kind.KIND_POISON_PILL);
    assertThat(status.disarmReasons().get(0).getDetail()).startsWith("off from controller");
    assertThat(run(1, true, FENCE).armed()).as("cleared: arms (quorum held long enough)").isTrue();
  }

  @Test
  void feedingNeverOutlivesTheVerdictsHeldUntil() {
    run(21, true, FENCE);
    long feeds = device.keepalives();
    // The evaluation ran long ago; its heldUntil has passed, so this late tick must not feed.
    QuorumVerdict stale = verdict(true);
    now += 10 * TICK;
    WatchdogStatus status = supervisor.tick(now, stale, FENCE);
    feeder.feedIfDue();
    assertThat(device.keepalives()).isEqualTo(feeds);
    assertThat(status.fencingInProgress()).isTrue();
  }

  @Test
  void excludeAndWaitKeepFeedingWhenQuorumIsLostAndExcludeAnnouncesIsolation() {
    for (QuorumLossAction action : List.of(QuorumLossAction.EXCLUDE, QuorumLossAction.WAIT)) {
      RecordingWatchdogDevice dev = new RecordingWatchdogDevice();
      WatchdogFeeder feeds = feeder(dev);
      ArmingConditions c = conditions(Mode.WATCHDOG, action);
      WatchdogSupervisor sup = armedFor21Ticks(feeds, c);
      WatchdogStatus status = null;
      for (int i = 0; i < 30; i++) {
        now += TICK;
        status = sup.tick(now, verdict(false), c);
        feeds.feedIfDue();
      }
      assertThat(status.fencingInProgress()).isFalse();
      assertThat(status.armed()).isTrue();
      assertThat(dev.keepalives()).as(action + " feeds through quorum loss").isEqualTo(6);
      assertThat(status.isolated()).isEqualTo(action == QuorumLossAction.EXCLUDE);
      now += TICK;
      assertThat(sup.tick(now, verdict(true), c).isolated()).isFalse();
    }
  }

  @Test
  void theDisableFileDisarmsWithMagicCloseAndItsRemovalReArms() {
    run(21, true, FENCE);
    ArmingConditions disabled = FENCE.withDisableFile(Optional.of("maintenance by bashible"));
    WatchdogStatus status = run(1, true, disabled);
    assertThat(status.armed()).isFalse();
    assertThat(device.events()).last().isEqualTo("magic-close");
    assertThat(status.disarmReasons()).singleElement().satisfies(r -> {
      assertThat(r.getKind()).isEqualTo(DisarmReason.Kind.KIND_DISABLE_FILE);
      assertThat(r.getDetail()).isEqualTo("maintenance by bashible");
    });
    assertThat(run(1, false, disabled).fencingInProgress()).as("a disarmed node never fences").isFalse();
    assertThat(run(30, true, FENCE).armed()).isTrue();
    assertThat(device.events().stream().filter(e -> e.startsWith("open"))).hasSize(2);
  }

  @Test
  void aDisarmSignalIsRefusedOnceQuorumIsLostUnderFence() {
    run(21, true, FENCE);
    run(1, false, FENCE);
    WatchdogStatus status = run(5, false, FENCE.withDisableFile(Optional.of("late")));
    assertThat(status.fencingInProgress()).isTrue();
    assertThat(device.events()).doesNotContain("magic-close");
  }

  @Test
  void notifyModeMaintenanceAndRemovalNeverArm() {
    assertThat(run(30, true, conditions(Mode.NOTIFY, QuorumLossAction.WAIT)).disarmReasons())
        .extracting(DisarmReason::getKind).containsExactly(DisarmReason.Kind.KIND_NOTIFY_MODE);
    ArmingConditions maintenance = new ArmingConditions(true, Mode.WATCHDOG, QuorumLossAction.FENCE,
        Duration.ofSeconds(10), Duration.ofSeconds(2), Duration.ofMillis(500),
        Optional.of("update.node.deckhouse.io/approved"), Optional.of("deletionTimestamp set"), Optional.empty());
    assertThat(run(30, true, maintenance).disarmReasons()).extracting(DisarmReason::getKind)
        .containsExactly(DisarmReason.Kind.KIND_MAINTENANCE, DisarmReason.Kind.KIND_BEING_REMOVED);
    assertThat(run(30, true, ArmingConditions.noConfig()).disarmReasons()).extracting(DisarmReason::getKind)
        .containsExactly(DisarmReason.Kind.KIND_NO_CONFIG);
    assertThat(device.events()).isEmpty();
  }

  @Test
  void aFailingDeviceIsAReportedConditionRetriedWithBackoff() {
    device.failOpen("missing: /dev/watchdog not found");
    WatchdogStatus status = run(21, true, FENCE);
    assertThat(status.armed()).isFalse();
    assertThat(status.condition()).isEqualTo("missing: /dev/watchdog not found");
    assertThat(status.disarmReasons()).extracting(DisarmReason::getKind)
        .containsExactly(DisarmReason.Kind.KIND_WATCHDOG_UNAVAILABLE);
    run(49, true, FENCE);
    assertThat(device.events()).containsExactly("open-failed");
    device.failOpen(null);
    assertThat(run(1, true, FENCE).armed()).isTrue();
  }

  @Test
  void aMissingDeviceIsReportedBeforeQuorumAllowsArmingAndArmsWithoutRestartOnceItAppears() {
    device.missing(true);
    WatchdogStatus first = run(1, false, FENCE);
    assertThat(first.deviceUnavailable()).isTrue();
    assertThat(first.disarmReasons()).extracting(DisarmReason::getKind)
        .containsExactly(DisarmReason.Kind.KIND_WATCHDOG_UNAVAILABLE, DisarmReason.Kind.KIND_ARMING_DELAY);
    assertThat(first.condition()).startsWith("missing:");

    WatchdogStatus held = run(100, true, FENCE);
    assertThat(held.armed()).isFalse();
    assertThat(held.disarmReasons()).extracting(DisarmReason::getKind)
        .containsExactly(DisarmReason.Kind.KIND_WATCHDOG_UNAVAILABLE);
    assertThat(device.events()).as("a device known missing is not opened").isEmpty();
    assertThat(device.presenceChecks()).as("checked at the reopen backoff (5 s), not every tick").isBetween(2, 3);

    // modprobe softdog: noticed at the next check, within one backoff.
    device.missing(false);
    WatchdogStatus status = null;
    int ticks = 0;
    while (ticks < 51 && (status == null || !status.armed())) {
      status = run(1, true, FENCE);
      ticks++;
    }
    assertThat(status.armed()).isTrue();
    assertThat(status.deviceUnavailable()).isFalse();
    assertThat(device.events()).containsExactly("open 10s");
  }

  @Test
  void aDeviceThatVanishedWhileDisarmedIsReportedAgainAndRetried() {
    assertThat(run(25, true, FENCE).armed()).isTrue();
    ArmingConditions disabled = FENCE.withDisableFile(Optional.of("maintenance"));
    assertThat(run(1, true, disabled).armed()).isFalse();
    device.missing(true);
    run(60, true, disabled);

    WatchdogStatus status = run(1, true, FENCE);
    assertThat(status.armed()).isFalse();
    assertThat(status.deviceUnavailable()).isTrue();
    assertThat(status.disarmReasons()).extracting(DisarmReason::getKind)
        .containsExactly(DisarmReason.Kind.KIND_WATCHDOG_UNAVAILABLE);
    device.missing(false);
    assertThat(run(51, true, FENCE).armed()).isTrue();
  }

  @Test
  void nowayoutIsRefusedBeforeOpening() {
    device.nowayout(Optional.of(true));
    WatchdogStatus status = run(25, true, FENCE);
    assertThat(status.armed()).isFalse();
    assertThat(status.condition()).startsWith("nowayout");
    assertThat(device.events()).isEmpty();
  }

  @Test
  void shutdownWhileFeedingDisarmsAndWhileStarvingClosesWithoutMagic() {
    run(21, true, FENCE);
    supervisor.shutdown();
    assertThat(device.events()).last().isEqualTo("magic-close");

    RecordingWatchdogDevice starving = new RecordingWatchdogDevice();
    WatchdogSupervisor fencing = new WatchdogSupervisor(feeder(starving), Duration.ofSeconds(5), "node=a group=g");
    for (int i = 0; i < 21; i++) {
      now += TICK;
      fencing.tick(now, verdict(true), FENCE);
    }
    now += TICK;
    fencing.tick(now, verdict(false), FENCE);
    WatchdogStatus status = fencing.shutdown();
    assertThat(starving.events()).last().isEqualTo("close-without-magic");
    assertThat(starving.events()).doesNotContain("magic-close");
    assertThat(status.armed()).as("stopped while fencing: not a clean disarm").isTrue();
    assertThat(status.fencingInProgress()).isTrue();
    assertThat(status.disarmReasons()).isEmpty();
  }

  @Test
  void shutdownWhileFeedingReportsACleanDisarm() {
    run(21, true, FENCE);
    WatchdogStatus status = supervisor.shutdown();
    assertThat(status.armed()).isFalse();
    assertThat(status.fencingInProgress()).isFalse();
    assertThat(status.disarmReasons()).extracting(DisarmReason::getKind)
        .containsExactly(DisarmReason.Kind.KIND_SHUTTING_DOWN);
  }

  @Test
  void theFeederStopsAtTheLastPublishedDeadlineWhenTicksStop() {
    run(21, true, FENCE);
    long deadline = feeder.feedUntilNanos().orElseThrow();
    assertThat(deadline).isEqualTo(now + TICK);
    long feeds = device.keepalives();
    // The quorum loop stalls: only the feeder runs, far past the deadline.
    for (int i = 0; i < 100; i++) {
      now += 10 * MS;
      feeder.feedIfDue();
    }
    assertThat(device.keepalives()).as("no keepalive at or after the deadline").isEqualTo(feeds);
    assertThat(feeder.lastFeedNanos().getAsLong()).isLessThan(deadline);
  }

  @Test
  void theFeederFeedsEveryIntervalUpToTheDeadlineWithoutNewTicks() {
    run(21, true, FENCE);
    long armedAt = feeder.lastFeedNanos().getAsLong();
    // One verdict that holds for 2 s: the feeder keeps feeding on its own, every 500 ms, strictly before it ends.
    supervisor.tick(now, new QuorumVerdict(true, now, now + 2_000 * MS, 3, 3, 2, new TreeSet<>(List.of("a")), "none",
        2_000 * MS, 0, List.of()), FENCE);
    long deadline = now + 2_000 * MS;
    List<Long> fedAt = new java.util.ArrayList<>();
    long before = device.keepalives();
    for (int i = 0; i < 400; i++) {
      now += 10 * MS;
      feeder.feedIfDue();
      if (device.keepalives() > before) {
        before = device.keepalives();
        fedAt.add(now);
      }
    }
    assertThat(fedAt).isNotEmpty().allSatisfy(t -> assertThat(t).isLessThan(deadline));
    assertThat(fedAt.get(fedAt.size() - 1)).isGreaterThan(deadline - 500 * MS - 1);
    for (int i = 1; i < fedAt.size(); i++) {
      assertThat(fedAt.get(i) - fedAt.get(i - 1)).isEqualTo(500 * MS);
    }
    assertThat(fedAt.get(0) - armedAt).isLessThanOrEqualTo(500 * MS);
  }
}
