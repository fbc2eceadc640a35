package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.config.StandaloneConfig;
import dev.fencing.agent.disk.BlockDevice;
import dev.fencing.agent.disk.InMemoryBlockDevice;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Changes to the {@code fencing} spec of a running, armed group that must not fence it: the controller streams them
 * to every agent at about the same time, so a change that made each agent lose quorum for a moment would reset the
 * whole group at once.
 */
class LiveConfigChangeTest {

  static final Duration STARTUP = Duration.ofSeconds(30);

  private static void armed(AgentCluster cluster) {
    await().atMost(STARTUP).until(() -> cluster.agents.stream().allMatch(a -> a.agent().snapshot().watchdog().armed()));
  }

  private static void apply(AgentCluster cluster, StandaloneConfig group) {
    for (AgentCluster.Agent a : cluster.agents) {
      a.agent().applyConfig(cluster.configFor(a.name(), group));
    }
  }

  /** Every agent stays armed, feeding and holding quorum for {@code during} (longer than a quorum window). */
  private static void staysArmed(AgentCluster cluster, Duration during) {
    await().during(during).atMost(during.plusSeconds(5)).until(() -> cluster.agents.stream().allMatch(a ->
        a.agent().snapshot().watchdog().armed() && !a.agent().snapshot().watchdog().fencingInProgress()
            && a.agent().snapshot().quorumHeld()));
    for (AgentCluster.Agent a : cluster.agents) {
      assertThat(a.counter("fencing.quorum.losses")).as("quorum losses at %s", a.name()).isZero();
      assertThat(a.device().events()).as("%s's watchdog", a.name()).doesNotContain("close-without-magic");
    }
  }

  /** FAST_TIMINGS with a quorum window of 2 s (the Auto profile's is at least 2 s): T_stop 3.05 s. */
  static final String WINDOW_2S = AgentCluster.FAST_TIMINGS.replace("quorumWindow: 600ms", "quorumWindow: 2s")
      .replace("armingDelay: 1s", "armingDelay: 2s");

  /**
   * {@code spec.fencing.networks} may be added to a running group (and removed): the round trips measured so far
   * carry over to the new networks until their own arrive. The change restarts gossip (a new socket per network),
   * which pauses heartbeats for about the leave broadcast's 0.5 s plus the start: the carried evidence covers that
   * while the quorum window is longer (before, the evidence was dropped and every agent fenced at the next tick).
   */
  @Test
  void givingAnArmedGroupGossipNetworksAndTakingThemAwayFencesNobody() throws Exception {
    assertThat(WINDOW_2S).contains("quorumWindow: 2s");
    try (AgentCluster cluster = AgentCluster.startWithTimings(3, WINDOW_2S)) {
      armed(cluster);
      StandaloneConfig withNetworks = cluster.groupWith(cluster.timings(), "  networks: ['127.0.0.0/24']\n");
      apply(cluster, withNetworks);
      await().atMost(STARTUP).until(() -> cluster.agents.stream().allMatch(a -> a.agent().snapshot().config()
          .orElseThrow().policy().networks().cidrs().size() == 1));
      staysArmed(cluster, Duration.ofSeconds(5));

      apply(cluster, cluster.config);
      await().atMost(STARTUP).until(() -> cluster.agents.stream().allMatch(a -> a.agent().snapshot().config()
          .orElseThrow().policy().networks().cidrs().isEmpty()));
      staysArmed(cluster, Duration.ofSeconds(5));
    }
  }

  /**
   * A new watchdog timeout reaches armed agents: each device is closed and opened again with it (a feed interval
   * for 10 s against a timer still at 5 s, or the other way round, would be wrong), and reports carry the timeout
   * the device runs with, which the controller uses for a node that stops reporting.
   */
  @Test
  void aNewWatchdogTimeoutIsAppliedToEveryArmedDeviceAndReported() throws Exception {
    try (AgentCluster cluster = AgentCluster.start(3, "Fence", "LowestName")) {
      armed(cluster);
      for (AgentCluster.Agent a : cluster.agents) {
        assertThat(a.agent().snapshot().toReport(System.nanoTime()).getWatchdogTimeout().getSeconds()).isEqualTo(5);
      }
      StandaloneConfig longer = cluster.groupEdited(y -> y.replace("watchdog: {timeout: 5s}",
          "watchdog: {timeout: 10s}"));
      assertThat(longer.policy().timings().watchdogTimeout()).isEqualTo(Duration.ofSeconds(10));
      apply(cluster, longer);
      await().atMost(STARTUP).until(() -> cluster.agents.stream().allMatch(a -> a.agent().snapshot()
          .toReport(System.nanoTime()).getWatchdogTimeout().getSeconds() == 10));
      staysArmed(cluster, Duration.ofSeconds(3));
      for (AgentCluster.Agent a : cluster.agents) {
        assertThat(a.device().events()).as("%s's watchdog", a.name())
            .containsSubsequence("open 5s", "magic-close", "open 10s");
      }
    }
  }

  /**
   * With {@code disk.required}, a change of the timings the disk cycle follows (under Auto: any change of the group
   * size) goes to the running disk thread. A new thread knows nothing until its first full read and holds no slot
   * until it allocated one: a required disk that is "not read yet" takes quorum away, and every armed node fenced
   * when the reads took a few milliseconds (20 ms per read: 3 of 3 nodes, every run, before this).
   */
  @Test
  void aTimingChangeDoesNotRestartARequiredDisksThread() throws Exception {
    InMemoryBlockDevice lun = InMemoryBlockDevice.sbdFormatted();
    BlockDevice slow = new BlockDevice() {
      @Override
      public String name() {
        return "slow-lun";
      }

      @Override
      public int sectorSize() {
        return lun.sectorSize();
      }

      @Override
      public String ioMode() {
        return "memory, 20 ms per read";
      }

      @Override
      public byte[] read(long sector, int count) throws IOException {
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted");
        }
        return lun.read(sector, count);
      }

      @Override
      public void write(long sector, byte[] data) throws IOException {
        lun.write(sector, data);
      }

      @Override
      public void close() {
      }
    };
    String disk = "{device: /dev/shared-lun, required: true, ioTimeout: 1s}";
    try (AgentCluster cluster = AgentCluster.startWithDisk(3, "Fence", "LowestName", AgentCluster.FAST_TIMINGS,
        disk, device -> slow)) {
      await().atMost(STARTUP).until(() -> cluster.agents.stream().allMatch(a -> a.agent().snapshot().watchdog()
          .armed() && a.agent().snapshot().toStatus(System.nanoTime()).getDiskCondition().equals("ok")));
      String faster = AgentCluster.FAST_TIMINGS.replace("heartbeatInterval: 100ms", "heartbeatInterval: 120ms");
      StandaloneConfig next = cluster.groupWith(faster + "\n  disk: " + disk, "");
      assertThat(next.policy().timings().heartbeatInterval()).isEqualTo(Duration.ofMillis(120));
      apply(cluster, next);
      staysArmed(cluster, Duration.ofSeconds(3));
      for (AgentCluster.Agent a : cluster.agents) {
        assertThat(a.agent().snapshot().toStatus(System.nanoTime()).getDiskCondition()).isEqualTo("ok");
      }
    }
  }

  /**
   * The msgwait the disk's header must have follows the config on a running disk thread: FAST_TIMINGS with ioTimeout
   * 1 s need 9.05 s (the header's 10 s do); a longer fenceMargin (the disk's own timing unchanged) or a longer
   * ioTimeout (the disk thread retimed) need more, which is flagged, and nothing else changes.
   */
  @Test
  void aConfigChangeRetimesTheMsgwaitTheDiskNeeds() throws Exception {
    InMemoryBlockDevice lun = InMemoryBlockDevice.sbdFormatted();
    String disk = "{device: /dev/shared-lun, ioTimeout: 1s}";
    try (AgentCluster cluster = AgentCluster.startWithDisk(3, "Fence", "LowestName", AgentCluster.FAST_TIMINGS,
        disk, device -> lun)) {
      await().atMost(STARTUP).until(() -> cluster.agents.stream().allMatch(a -> a.agent().snapshot().watchdog()
          .armed() && msgwaitTooShort(a) == 0));

      String widerMargin = AgentCluster.FAST_TIMINGS.replace("fenceMargin: 1s", "fenceMargin: 2s");
      apply(cluster, cluster.groupWith(widerMargin + "\n  disk: " + disk, ""));
      await().atMost(Duration.ofSeconds(5)).until(() -> cluster.agents.stream().allMatch(a -> msgwaitTooShort(a) == 1
          && a.agent().snapshot().toStatus(System.nanoTime()).getDiskCondition()
              .startsWith("ok, but msgwait 10s is shorter than this node needs to be reset after a poison pill (11s)")));

      apply(cluster, cluster.groupWith(AgentCluster.FAST_TIMINGS + "\n  disk: " + disk, ""));
      await().atMost(Duration.ofSeconds(5)).until(() -> cluster.agents.stream().allMatch(a -> msgwaitTooShort(a) == 0));

      String slowerDisk = "{device: /dev/shared-lun, ioTimeout: 2s}";
      apply(cluster, cluster.groupWith(AgentCluster.FAST_TIMINGS + "\n  disk: " + slowerDisk, ""));
      await().atMost(Duration.ofSeconds(5)).until(() -> cluster.agents.stream().allMatch(a -> msgwaitTooShort(a) == 1
          && a.agent().snapshot().toStatus(System.nanoTime()).getDiskCondition().contains("(13s)")));
      staysArmed(cluster, Duration.ofSeconds(2));
    }
  }

  private static double msgwaitTooShort(AgentCluster.Agent a) {
    return a.registry().get("fencing.disk.msgwait.too.short").gauge().value();
  }

  /**
   * A change that restarts gossip (here: node-a moves to another group, with node-b but without node-c) hands what
   * consumers see to the new gossip member: node-c goes at once (no longer expected), node-b once the new member has
   * not reported it within the grace (node-b still gossips in the old group, under the old label), and consumers never
   * see node-a itself leave. Before, GetAll kept node-b and node-c for good and StreamEvents sent LEFT for node-a.
   */
  @Test
  void aGossipRestartWithdrawsWhatTheNewMemberDoesNotReportAndNeverShowsTheNodeLeavingItself() throws Exception {
    try (AgentCluster cluster = AgentCluster.start(3, "Fence", "LowestName")) {
      armed(cluster);
      AgentCluster.Agent a = cluster.agent("node-a");
      await().atMost(STARTUP).until(() -> a.members().size() == 3);
      StandaloneConfig moved = cluster.groupOf(java.util.List.of("node-a", "node-b"),
          y -> y.replace("group: test\n", "group: test2\n"));
      assertThat(moved.group()).isEqualTo("test2");
      int eventsBefore = a.events().size();
      a.agent().applyConfig(cluster.configFor("node-a", moved));

      await().atMost(Duration.ofSeconds(5)).until(() -> !a.members().contains("node-c"));
      assertThat(a.members()).as("node-b until the grace runs out").contains("node-a", "node-b");
      await().atMost(Duration.ofSeconds(20)).until(() -> a.members().equals(java.util.List.of("node-a")));
      java.util.List<dev.fencing.proto.fencing.v1.Event> after = a.events().subList(eventsBefore, a.events().size());
      assertThat(after).filteredOn(e -> e.getType() == dev.fencing.proto.fencing.v1.EventType.LEFT)
          .extracting(e -> e.getNode().getName()).containsExactlyInAnyOrder("node-c", "node-b");
      assertThat(after).extracting(e -> e.getNode().getName()).as("node-a's own events").doesNotContain("node-a");
    }
  }

  /**
   * An armed node that gets a config for another group without first getting its old group's removal (its stream
   * was down while its label changed, and the reconnect went straight to the new group) has left the old group,
   * which means being removed: it disarms while the old group's quorum still holds, and only then takes the new
   * group. Before, it judged at once on a new evaluator without a single round trip in the new group, kept the
   * armed watchdog, and fenced at the next tick. node-b, not the lowest name, cannot win the new two-member group's
   * tie on its own (node-a stays in the old group), so it stays disarmed there.
   */
  @Test
  void anArmedNodeGivenAnotherGroupsConfigDisarmsInsteadOfFencing() throws Exception {
    try (AgentCluster cluster = AgentCluster.start(3, "Fence", "LowestName")) {
      armed(cluster);
      AgentCluster.Agent b = cluster.agent("node-b");
      StandaloneConfig moved = cluster.groupOf(java.util.List.of("node-a", "node-b"),
          y -> y.replace("group: test\n", "group: test2\n"));
      b.agent().applyConfig(cluster.configFor("node-b", moved));

      await().atMost(Duration.ofSeconds(5)).until(() -> b.agent().snapshot().config()
          .map(c -> c.group().equals("test2")).orElse(false));
      await().during(Duration.ofSeconds(10)).atMost(Duration.ofSeconds(15)).until(() ->
          !b.agent().snapshot().watchdog().armed() && !b.agent().snapshot().watchdog().fencingInProgress());
      assertThat(b.device().events()).containsSubsequence("open 5s", "magic-close")
          .doesNotContain("close-without-magic");
      for (String stays : java.util.List.of("node-a", "node-c")) {
        assertThat(cluster.agent(stays).agent().snapshot().watchdog().fencingInProgress()).as(stays).isFalse();
      }
    }
  }

  /** Leaving a group is no way out of a fence already under way: the majority counts on this node's reset. */
  @Test
  void aFencingNodeGivenAnotherGroupsConfigKeepsFencing() throws Exception {
    try (AgentCluster cluster = AgentCluster.start(3, "Fence", "LowestName")) {
      armed(cluster);
      AgentCluster.Agent b = cluster.agent("node-b");
      cluster.isolate("node-b");
      await().atMost(Duration.ofSeconds(5)).until(() -> b.agent().snapshot().watchdog().fencingInProgress());
      StandaloneConfig moved = cluster.groupOf(java.util.List.of("node-a", "node-b"),
          y -> y.replace("group: test\n", "group: test2\n"));
      b.agent().applyConfig(cluster.configFor("node-b", moved));

      await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(() ->
          b.agent().snapshot().watchdog().fencingInProgress());
      assertThat(b.device().events()).doesNotContain("magic-close");
    }
  }
}
