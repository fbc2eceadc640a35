package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.disk.InMemoryBlockDevice;
import dev.fencing.agent.disk.SbdCommand;
import dev.fencing.agent.disk.SbdDevice;
import dev.fencing.agent.disk.SbdHeader;
import dev.fencing.agent.disk.SbdMailbox;
import dev.fencing.proto.fencing.v1.DisarmReason;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Real agents on loopback memberlist sharing one disk in memory (SBD layout): the Disk tie-breaker lets exactly one
 * half of an even split survive, a node the majority no longer hears stops on the disk's evidence, a poison pill
 * fences a healthy node, and losing the disk matters only with {@code required: true}.
 */
class DiskArbiterAgentTest {

  private static final String DISK = "{device: /dev/shared-lun, ioTimeout: 1s}";
  /** A 4 s quorum window (T_stop 6.05 s) and a 2 s heard window: room between the two. */
  private static final String SLOW = "{probeInterval: 200ms, probeTimeout: 80ms, suspicionMult: 3, "
      + "gossipInterval: 100ms, pushPullInterval: 2s, heartbeatInterval: 100ms, quorumWindow: 4s, "
      + "localHealthCap: 1.5, evaluationTick: 50ms, feedInterval: 200ms, armingDelay: 4s, fenceMargin: 1s}";
  /**
   * SLOW with an 8 s quorum window, so a 4 s heard window: a 5.2 s blip of the whole network is 1.2 s past the heard
   * window (every slot says "hears nobody") and 2.8 s short of the quorum window, room for a loaded machine to take
   * its time reconnecting the agents after the blip.
   */
  private static final String BLIP = SLOW.replace("quorumWindow: 4s", "quorumWindow: 8s")
      .replace("armingDelay: 4s", "armingDelay: 8s");
  private final InMemoryBlockDevice lun = InMemoryBlockDevice.sbdFormatted();

  DiskArbiterAgentTest() throws IOException {}

  private AgentCluster start(int n, String tieBreakers, String timings, String disk) throws Exception {
    AgentCluster cluster = AgentCluster.startWithDisk(n, "Fence", tieBreakers, timings, disk, device -> lun);
    await().atMost(Duration.ofSeconds(30)).until(() -> cluster.agents.stream()
        .allMatch(a -> a.agent().snapshot().watchdog().armed()
            && a.agent().snapshot().toStatus(System.nanoTime()).getDiskCondition().equals("ok")));
    return cluster;
  }

  private static boolean fencing(AgentCluster cluster, String name) {
    return cluster.agent(name).agent().snapshot().watchdog().fencingInProgress();
  }

  /**
   * Usually the half with the lowest name (priority) wins; on a loaded machine the other half's claim can grow old and
   * win before the priority half claims, which the protocol allows. Either way exactly one half keeps feeding.
   */
  @Test
  void inAnEvenSplitExactlyTheSideHoldingTheDiskLeaseKeepsFeeding() throws Exception {
    try (AgentCluster cluster = start(4, "Disk", AgentCluster.FAST_TIMINGS, DISK)) {
      cluster.split(List.of("node-a", "node-b"), List.of("node-c", "node-d"));
      await().atMost(Duration.ofSeconds(10)).until(() -> fencing(cluster, "node-c") && fencing(cluster, "node-d")
          || fencing(cluster, "node-a") && fencing(cluster, "node-b"));
      List<String> winners = fencing(cluster, "node-a") ? List.of("node-c", "node-d") : List.of("node-a", "node-b");
      long feeds0 = cluster.agent(winners.get(0)).device().keepalives();
      long feeds1 = cluster.agent(winners.get(1)).device().keepalives();
      // the winners keep feeding on the renewed lease
      await().atMost(Duration.ofSeconds(10)).until(() ->
          cluster.agent(winners.get(0)).device().keepalives() > feeds0 + 5
              && cluster.agent(winners.get(1)).device().keepalives() > feeds1 + 5);
      assertThat(fencing(cluster, winners.get(0)) || fencing(cluster, winners.get(1))).isFalse();
      assertThat(cluster.agent(winners.get(0)).agent().snapshot().verdict().orElseThrow().tieBreakerOutcome())
          .contains("Disk");
    }
  }

  @Test
  void aNodeTheMajorityNoLongerHearsStopsOnTheDiskEvidenceBeforeItsWindowRunsOut() throws Exception {
    // A long window (T_stop 6.05 s): only the disk evidence stops the cut-off node early, with its reason.
    try (AgentCluster cluster = start(3, "LowestName", SLOW, DISK)) {
      cluster.isolate("node-c");
      await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
          .until(() -> fencing(cluster, "node-c"));
      assertThat(cluster.agent("node-c").agent().snapshot().verdict().orElseThrow().tieBreakerOutcome())
          .startsWith("disk: cut off: [node-a, node-b] hold quorum without hearing this node");
      assertThat(fencing(cluster, "node-a") || fencing(cluster, "node-b")).isFalse();
    }
  }

  /**
   * The whole network goes for 5.2 s, less than the 8 s quorum window and more than the 4 s heard window: every slot
   * then says "quorum held, hears nobody". No node is cut off from the others (none of them hears anyone), so none
   * fences; before, each took the others' slots for a majority that no longer heard it and all three fenced, within
   * a second of the heard window (so during the blip).
   */
  @Test
  void aBlipOfTheWholeNetworkFencesNobody() throws Exception {
    try (AgentCluster cluster = start(3, "LowestName", BLIP, DISK)) {
      cluster.split(List.of("node-a"), List.of("node-b"));
      cluster.split(List.of("node-a"), List.of("node-c"));
      cluster.split(List.of("node-b"), List.of("node-c"));
      Thread.sleep(5_200);
      cluster.cut.healAll();
      Thread.sleep(2_000);
      for (String n : List.of("node-a", "node-b", "node-c")) {
        assertThat(fencing(cluster, n)).as(n).isFalse();
      }
    }
  }

  /**
   * Above 16 members a node heartbeats only its overlay neighbours, so most slots do not name it as heard. Those
   * holders do not hear each other either: no connected majority, no cut-off; before, no node of 17 ever armed.
   */
  @Test
  void aGroupRelayedOverTheOverlayArmsWithADisk() throws Exception {
    String timings = "{probeInterval: 500ms, probeTimeout: 200ms, suspicionMult: 4, gossipInterval: 200ms, "
        + "pushPullInterval: 5s, heartbeatInterval: 250ms, quorumWindow: 3s, localHealthCap: 1.5, "
        + "evaluationTick: 50ms, feedInterval: 500ms, armingDelay: 6s, fenceMargin: 1s}";
    try (AgentCluster cluster = AgentCluster.startWithDisk(17, "Fence", "LowestName", timings, DISK, d -> lun)) {
      await().atMost(Duration.ofSeconds(45)).until(() -> cluster.agents.stream()
          .allMatch(a -> a.agent().snapshot().watchdog().armed()));
      assertThat(cluster.agents).noneMatch(a -> a.agent().snapshot().watchdog().fencingInProgress());
    }
  }

  @Test
  void aPoisonPillFencesAHealthyNodeAndKeepsItFromArming() throws Exception {
    try (AgentCluster cluster = start(3, "LowestName", AgentCluster.FAST_TIMINGS, DISK)) {
      SbdDevice sbd = new SbdDevice(lun);
      SbdHeader header = sbd.readHeader();
      int slot = sbd.readSlots(header, 3).stream().filter(r -> r.slot().ownedBy("node-b")).findFirst()
          .orElseThrow().index();
      sbd.writeMailbox(header, slot, SbdMailbox.of(SbdCommand.RESET, "controller"));

      await().atMost(Duration.ofSeconds(5)).until(() -> fencing(cluster, "node-b"));
      assertThat(cluster.agent("node-b").agent().snapshot().toStatus(System.nanoTime()).getDiskCondition())
          .isEqualTo("poison pill: reset from controller");
      assertThat(cluster.agent("node-b").agent().snapshot().toReport(System.nanoTime()).getDiskCondition())
          .isEqualTo("poison pill: reset from controller");
      assertThat(fencing(cluster, "node-a") || fencing(cluster, "node-c")).isFalse();
      assertThat(cluster.agent("node-b").registry().get("fencing.disk.poison.pill").gauge().value()).isEqualTo(1);
      assertThat(cluster.agent("node-a").registry().get("fencing.disk.poison.pill").gauge().value()).isZero();
      assertThat(cluster.agent("node-a").registry().get("fencing.disk.up").gauge().value()).isEqualTo(1);
      assertThat(cluster.agent("node-a").registry().get("fencing.disk.write.seconds").gauge().value()).isPositive();
    }
  }

  /**
   * FAST_TIMINGS with ioTimeout 1 s need 2 × 1 s + 1 s + 50 ms + 5 s + 1 s = 9.05 s: a header with msgwait 2 s (as in
   * the e2e lab) is flagged on every node, which still arms and feeds; recreated with 10 s the flag goes.
   */
  @Test
  void aMsgwaitShorterThanTheNodeNeedsIsFlaggedAndChangesNothingElse() throws Exception {
    SbdDevice sbd = new SbdDevice(lun);
    SbdHeader defaults = sbd.readHeader();
    lun.write(0, withMsgwait(defaults, 2).encode());
    try (AgentCluster cluster = AgentCluster.startWithDisk(3, "Fence", "LowestName", AgentCluster.FAST_TIMINGS,
        DISK, device -> lun)) {
      await().atMost(Duration.ofSeconds(30)).until(() -> cluster.agents.stream()
          .allMatch(a -> a.agent().snapshot().watchdog().armed()
              && a.registry().get("fencing.disk.msgwait.too.short").gauge().value() == 1
              && a.agent().snapshot().toStatus(System.nanoTime()).getDiskCondition().startsWith("ok, but")));
      assertThat(cluster.agent("node-a").agent().snapshot().toStatus(System.nanoTime()).getDiskCondition())
          .startsWith("ok, but msgwait 2s is shorter than this node needs to be reset after a poison pill (10s)")
          .contains("sbd -d /dev/shared-lun -4 10 create");
      assertThat(cluster.agent("node-a").registry().get("fencing.disk.up").gauge().value()).isEqualTo(1);
      long feeds = cluster.agent("node-a").device().keepalives();
      await().atMost(Duration.ofSeconds(5)).until(() -> cluster.agent("node-a").device().keepalives() > feeds + 5);
      assertThat(cluster.agents).noneMatch(a -> a.agent().snapshot().watchdog().fencingInProgress());

      lun.write(0, withMsgwait(defaults, 10).encode());
      await().atMost(Duration.ofSeconds(5)).until(() -> cluster.agents.stream()
          .allMatch(a -> a.registry().get("fencing.disk.msgwait.too.short").gauge().value() == 0
              && a.agent().snapshot().toStatus(System.nanoTime()).getDiskCondition().equals("ok")));
      assertThat(cluster.agents).allMatch(a -> a.agent().snapshot().watchdog().armed());
    }
  }

  private static SbdHeader withMsgwait(SbdHeader h, long msgwait) {
    return new SbdHeader(h.slots(), h.sectorSize(), h.watchdogTimeout(), h.allocateTimeout(), h.loopTimeout(),
        msgwait, h.minorVersion(), h.uuid());
  }

  @Test
  void aPoisonPillLeftInTheSlotKeepsARestartedNodeDisarmed() throws Exception {
    SbdDevice sbd = new SbdDevice(lun);
    SbdHeader header = sbd.readHeader();
    try (AgentCluster cluster = start(3, "LowestName", AgentCluster.FAST_TIMINGS, DISK)) {
      cluster.agent("node-b").agent().close();
      int slot = sbd.readSlots(header, 3).stream().filter(r -> r.slot().ownedBy("node-b")).findFirst()
          .orElseThrow().index();
      sbd.writeMailbox(header, slot, SbdMailbox.of(SbdCommand.OFF, "admin"));
      cluster.agents.remove(cluster.agent("node-b"));
      AgentCluster.Agent again = cluster.startAgent("node-b", cluster.configFor("node-b", cluster.config));
      await().atMost(Duration.ofSeconds(10)).until(() -> again.agent().snapshot().watchdog().disarmReasons().stream()
          .anyMatch(r -> r.getKind() == DisarmReason.Kind.KIND_POISON_PILL));
      assertThat(again.agent().snapshot().watchdog().armed()).isFalse();

      sbd.writeMailbox(header, slot, SbdMailbox.of(SbdCommand.CLEAR, "admin"));
      await().atMost(Duration.ofSeconds(10)).until(() -> again.agent().snapshot().watchdog().armed());
    }
  }

  @Test
  void theDiskDeviceIsOpenedUnderTheHostRootTheDaemonSetMounts() {
    assertThat(AgentRuntime.diskPath(java.nio.file.Path.of("/host"), "/dev/disk/by-id/wwn-0x1"))
        .isEqualTo(java.nio.file.Path.of("/host/dev/disk/by-id/wwn-0x1"));
    assertThat(AgentRuntime.diskPath(java.nio.file.Path.of("/"), "/dev/sdb")).isEqualTo(java.nio.file.Path.of("/dev/sdb"));
  }

  @Test
  void losingTheDiskChangesNothingWhileTheNetworkQuorumHolds() throws Exception {
    try (AgentCluster cluster = start(3, "LowestName", AgentCluster.FAST_TIMINGS, DISK)) {
      lun.hang();
      try {
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.agent("node-a").agent().snapshot()
            .toStatus(System.nanoTime()).getDiskCondition().startsWith("unreadable: I/O pending"));
        assertThat(cluster.agent("node-a").registry().get("fencing.disk.up").gauge().value()).isZero();
        long feeds = cluster.agent("node-a").device().keepalives();
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.agent("node-a").device().keepalives() > feeds + 5);
        assertThat(cluster.agents).noneMatch(a -> a.agent().snapshot().watchdog().fencingInProgress());
      } finally {
        lun.release();
      }
    }
  }

  @Test
  void withDiskRequiredLosingTheDiskFences() throws Exception {
    try (AgentCluster cluster = start(3, "LowestName", AgentCluster.FAST_TIMINGS,
        "{device: /dev/shared-lun, required: true, ioTimeout: 1s}")) {
      lun.failWith(new IOException("EIO"));
      await().atMost(Duration.ofSeconds(10)).until(() -> cluster.agents.stream()
          .allMatch(a -> a.agent().snapshot().watchdog().fencingInProgress()));
      assertThat(cluster.agent("node-a").agent().snapshot().verdict().orElseThrow().tieBreakerOutcome())
          .startsWith("disk required but unreadable");
    }
  }
}
