package dev.fencing.agent.disk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.quorum.MonotonicClock;
import dev.fencing.agent.quorum.TieBreakVerdict;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Disk threads on real threads and the system clock over one shared in-memory device; each node may see it through
 * its own host's page cache ({@link PageCacheBlockDevice}), as {@link DirectBlockDevice} does where O_DIRECT is refused.
 */
class DiskMonitorTest {

  private static final DiskTiming TIMING = new DiskTiming(Duration.ofMillis(20), Duration.ofMillis(500));
  private static final SortedSet<String> AB = set("a", "b");
  private static final SortedSet<String> CD = set("c", "d");
  private static final SortedSet<String> ABCD = set("a", "b", "c", "d");

  private final InMemoryBlockDevice lun = new InMemoryBlockDevice(1 << 20, 512);
  private final AtomicBoolean running = new AtomicBoolean(true);

  DiskMonitorTest() throws IOException {
    // sbd create's layout with an allocate timeout of 0, so the slots are taken within a few cycles
    SbdHeader header = new SbdHeader(255, 512, 5, 0, 1, 10, 1, new UUID(1, 2));
    lun.write(1, new byte[(int) (header.layoutBytes() - 512)]);
    lun.write(0, header.encode());
  }

  @AfterEach
  void stopDiskThreads() {
    running.set(false);
  }

  private static SortedSet<String> set(String... names) {
    return new TreeSet<>(List.of(names));
  }

  private DiskMonitor start(String self, BlockDevice device, LocalView view) {
    DiskMonitor monitor = new DiskMonitor(() -> device, "shared-lun", self, TIMING, MonotonicClock.system(),
        () -> view, "node=" + self + " group=g");
    Thread thread = new Thread(() -> monitor.run(running::get), "fencing-disk-" + self);
    thread.setDaemon(true);
    thread.start();
    return monitor;
  }

  /**
   * The reviewer's split (F7): a 2+2 split where every host reads the disk through its own page cache. Neither side
   * sees the other's claim, so before this each side won the Disk tie-breaker and both kept quorum. A disk that is not
   * coherent across hosts breaks no tie: every node gets no answer, says why, and its condition says so.
   */
  @Test
  void aDiskReadThroughThePageCacheBreaksNoTie() {
    Map<String, PageCacheBlockDevice> hosts = new TreeMap<>();
    Map<String, DiskMonitor> monitors = new TreeMap<>();
    for (String node : ABCD) {
      SortedSet<String> side = AB.contains(node) ? AB : CD;
      hosts.put(node, new PageCacheBlockDevice(lun));
      monitors.put(node, start(node, hosts.get(node), new LocalView(ABCD, 3, false, 1, side, side)));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> monitors.values().stream()
        .allMatch(m -> m.lostReason(System.nanoTime()).isEmpty()));
    // Every slot is allocated and written; from now on each host keeps what it read in its page cache.
    hosts.values().forEach(PageCacheBlockDevice::startCaching);

    // Each poll is one evaluation tick of every node's quorum loop, which renews its tie request.
    SortedSet<String> winners = new TreeSet<>();
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
        .untilAsserted(() -> {
          long now = System.nanoTime();
          for (Map.Entry<String, DiskMonitor> e : monitors.entrySet()) {
            SortedSet<String> side = AB.contains(e.getKey()) ? AB : CD;
            TieBreakVerdict verdict = new DiskTieBreaker(e.getValue()).evaluate(side, ABCD, now);
            if (verdict.outcome() == TieBreakVerdict.Outcome.WIN) {
              winners.add(e.getKey());
            }
          }
          assertThat(winners).as("nodes that won the Disk tie on cached reads").isEmpty();
        });

    long now = System.nanoTime();
    for (DiskMonitor m : monitors.values()) {
      assertThat(new DiskTieBreaker(m).evaluate(AB, ABCD, now).reason())
          .isEqualTo("Disk: not coherent: " + PageCacheBlockDevice.IO_MODE + "; reads may come from this host's page"
              + " cache, so the disk breaks no ties and gives no cut-off evidence");
      assertThat(m.condition(now)).startsWith("not coherent: O_DSYNC (");
      assertThat(m.state().tie().phase()).as("no claim written").isEqualTo(DiskState.Phase.IDLE);
    }
  }

  /**
   * Slots that say a quorum holds without hearing this node are cut-off evidence only on a coherent disk: read
   * through the page cache the views may be old, so the evidence is not used.
   */
  @Test
  void aDiskReadThroughThePageCacheGivesNoCutOffEvidence() {
    SortedSet<String> abc = set("a", "b", "c");
    SortedSet<String> bc = set("b", "c");
    start("b", lun, new LocalView(abc, 2, true, 1, bc, bc));
    start("c", lun, new LocalView(abc, 2, true, 1, bc, bc));
    DiskMonitor a = start("a", new PageCacheBlockDevice(lun), new LocalView(abc, 2, true, 1, set("a"), set("a")));

    await().atMost(Duration.ofSeconds(10)).until(() -> a.state().cutOff().isPresent());
    long now = System.nanoTime();
    assertThat(a.lostReason(now)).isEmpty();
    assertThat(a.cutOff(now)).isEmpty();
    assertThat(a.condition(now)).startsWith("not coherent: ");
  }
}
