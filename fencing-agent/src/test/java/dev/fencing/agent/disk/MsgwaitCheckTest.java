package dev.fencing.agent.disk;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The msgwait bound, the comparison with the header, and that it is logged once per change, not per cycle. */
class MsgwaitCheckTest {

  private static final String DEVICE = "/dev/disk/by-id/wwn-0x1";

  private final Logger logger = (Logger) LoggerFactory.getLogger(MsgwaitCheck.class);
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private Level levelBefore;
  private boolean additiveBefore;
  private final MsgwaitCheck check = new MsgwaitCheck(DEVICE, "node=node-a group=g");

  @BeforeEach
  void captureLogs() {
    levelBefore = logger.getLevel();
    additiveBefore = logger.isAdditive();
    logger.setLevel(Level.INFO);
    logger.setAdditive(false); // captured here, not printed into the build log
    logs.start();
    logger.addAppender(logs);
  }

  @AfterEach
  void releaseLogs() {
    logger.detachAppender(logs);
    logger.setLevel(levelBefore);
    logger.setAdditive(additiveBefore);
  }

  private List<String> lines() {
    return logs.list.stream().map(e -> e.getLevel() + " " + e.getFormattedMessage()).toList();
  }

  @Test
  void theBoundIsTwoIoTimeoutsOrAnIntervalThenARead() {
    // read + write of the cycle that just missed the pill, then the next read: 2 × 5 s + 5 s
    assertThat(MsgwaitCheck.needed(new DiskTiming(Duration.ofSeconds(1), Duration.ofSeconds(5)),
        Duration.ofMillis(100), Duration.ofSeconds(60), Duration.ofSeconds(5))).isEqualTo(Duration.ofMillis(80_100));
    // an interval longer than read + write: the next read starts one interval after the last
    assertThat(MsgwaitCheck.needed(new DiskTiming(Duration.ofSeconds(1), Duration.ofMillis(200)),
        Duration.ofMillis(50), Duration.ofSeconds(5), Duration.ofSeconds(1)))
        .isEqualTo(Duration.ofMillis(1_000 + 200 + 50 + 5_000 + 1_000));
  }

  @Test
  void theDefaultTimingsNeedEightyOneSeconds() {
    // Auto/Medium: cycle at most 1 s, ioTimeout 5 s, tick 100 ms, watchdog 60 s, fenceMargin 5 s (README example)
    Duration needed = MsgwaitCheck.needed(new DiskTiming(Duration.ofSeconds(1), Duration.ofSeconds(5)),
        Duration.ofMillis(100), Duration.ofSeconds(60), Duration.ofSeconds(5));
    assertThat(MsgwaitCheck.wholeSeconds(needed)).isEqualTo(81);
    assertThat(MsgwaitCheck.wholeSeconds(Duration.ofSeconds(81))).isEqualTo(81);
  }

  @Test
  void aMsgwaitShorterThanNeededIsFlaggedAndEqualOrLongerIsNot() {
    check.require(Duration.ofSeconds(17));
    check.observe(16);
    assertThat(check.tooShort()).isEqualTo(1.0);
    assertThat(check.conditionWhenUsable()).isEqualTo("ok, but msgwait 16s is shorter than this node needs to be"
        + " reset after a poison pill (17s): sbd, fence_sbd and pacemaker would count it fenced too early; recreate"
        + " the header with 'sbd -d " + DEVICE + " -4 17 create' (it empties every slot and mailbox:"
        + " docs/runbook.md#disk-msgwait-too-short)");
    check.observe(17);
    assertThat(check.tooShort()).as("exactly equal").isEqualTo(0.0);
    assertThat(check.conditionWhenUsable()).isEqualTo("ok");
    check.observe(18);
    assertThat(check.tooShort()).isEqualTo(0.0);
  }

  @Test
  void aNeedWithAFractionOfASecondNeedsTheNextWholeSecond() {
    check.require(Duration.ofMillis(16_001));
    check.observe(16);
    assertThat(check.tooShort()).isEqualTo(1.0);
    check.observe(17);
    assertThat(check.tooShort()).isEqualTo(0.0);
  }

  @Test
  void unknownUntilBothTheHeaderAndTheConfigAreKnown() {
    assertThat(check.tooShort()).isNaN();
    check.observe(10);
    assertThat(check.tooShort()).as("header read, no config yet").isNaN();
    assertThat(check.conditionWhenUsable()).isEqualTo("ok");
    MsgwaitCheck configFirst = new MsgwaitCheck(DEVICE, "node=node-a group=g");
    configFirst.require(Duration.ofSeconds(81));
    assertThat(configFirst.tooShort()).as("config, no header yet").isNaN();
    configFirst.observe(10);
    assertThat(configFirst.tooShort()).isEqualTo(1.0);
    assertThat(lines()).isEqualTo(List.of("WARN node=node-a group=g event=disk_msgwait_too_short msgwait=10s"
        + " needed=81s device=" + DEVICE + " detail=\"sbd, fence_sbd and pacemaker count this node fenced msgwait"
        + " after writing a poison pill; it may still run then\""));
  }

  @Test
  void theWarningIsLoggedOncePerChangeNotPerCycle() {
    check.require(Duration.ofSeconds(17));
    for (int cycle = 0; cycle < 100; cycle++) {
      check.observe(10);
      check.require(Duration.ofMillis(16_500)); // the same whole seconds: no change
    }
    assertThat(lines()).hasSize(1).allMatch(l -> l.startsWith("WARN ") && l.contains(
        "event=disk_msgwait_too_short msgwait=10s needed=17s device=" + DEVICE));

    for (int cycle = 0; cycle < 100; cycle++) {
      check.observe(12); // someone recreated the header, still too short
    }
    assertThat(lines()).hasSize(2).last().asString().contains("msgwait=12s needed=17s");

    for (int cycle = 0; cycle < 100; cycle++) {
      check.observe(20);
    }
    assertThat(lines()).hasSize(3).last().asString()
        .isEqualTo("INFO node=node-a group=g event=disk_msgwait_ok msgwait=20s needed=17s device=" + DEVICE);
    check.observe(30);
    assertThat(lines()).as("fine to fine: nothing to say").hasSize(3);
  }

  @Test
  void aConfigChangeRetimesTheBoundWithoutANewRead() {
    check.require(Duration.ofSeconds(9));
    check.observe(10);
    assertThat(check.tooShort()).isEqualTo(0.0);
    assertThat(lines()).as("fine from the start: nothing to say").isEmpty();

    check.require(Duration.ofSeconds(65)); // e.g. watchdog.timeout 5s → 60s
    assertThat(check.tooShort()).isEqualTo(1.0);
    assertThat(lines()).hasSize(1).first().asString().contains("msgwait=10s needed=65s");

    check.require(Duration.ofSeconds(70));
    assertThat(lines()).as("a new bound is a change").hasSize(2).last().asString().contains("needed=70s");

    check.require(Duration.ofSeconds(10));
    assertThat(check.tooShort()).isEqualTo(0.0);
    assertThat(lines()).hasSize(3).last().asString().startsWith("INFO ").contains("event=disk_msgwait_ok");
  }
}
