package dev.fencing.agent.disk;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fencing.agent.quorum.MonotonicClock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Against ClusterLabs' {@code sbd} (Debian package {@code sbd}) on a loop device: a device sbd created carries our
 * slot where {@code sbd list} shows it, {@code sbd message NODE reset} is a poison pill we act on, and a device we
 * created is one sbd dumps, allocates on and lists. Needs root (loop devices) and {@code /usr/sbin/sbd}; CI runs as
 * root, elsewhere it is skipped with that reason.
 */
class SbdToolInteropTest {

  private static final Path SBD = Path.of("/usr/sbin/sbd");

  @TempDir
  Path dir;
  private String loop;
  private final AtomicBoolean running = new AtomicBoolean(true);

  @BeforeEach
  void attachLoopDevice() throws Exception {
    assumeTrue(Files.isExecutable(SBD), "needs the sbd tool (apt-get install sbd), not installed here");
    assumeTrue("root".equals(System.getProperty("user.name")), "needs root to attach a loop device");
    Path image = dir.resolve("sbd.img");
    try (var f = new java.io.RandomAccessFile(image.toFile(), "rw")) {
      f.setLength(8L << 20);
    }
    loop = run("losetup", "-f", "--show", image.toString()).trim();
  }

  @AfterEach
  void detach() throws Exception {
    running.set(false);
    if (loop != null) {
      // the monitor thread may still be mid-I/O: give it one interval to close the device
      Thread.sleep(300);
      run("losetup", "-d", loop);
    }
  }

  @Test
  void sbdListsOurSlotAndItsResetIsAPoisonPillWeActOn() throws Exception {
    run(SBD.toString(), "-d", loop, "-1", "2", "-2", "1", "-4", "2", "create");
    DiskMonitor monitor = new DiskMonitor(() -> DirectBlockDevice.open(Path.of(loop)), loop, "node-a",
        new DiskTiming(Duration.ofMillis(100), Duration.ofSeconds(2)), MonotonicClock.system(),
        () -> new LocalView(new TreeSet<>(List.of("node-a", "node-b")), 2, true, 3,
            new TreeSet<>(List.of("node-a")), new TreeSet<>(List.of("node-a"))), "node=node-a group=interop");
    Thread thread = new Thread(() -> monitor.run(running::get), "fencing-disk-test");
    thread.setDaemon(true);
    thread.start();

    await().atMost(Duration.ofSeconds(15)).until(() -> monitor.state().slot().isPresent());
    assertEquals("O_DIRECT", monitor.ioMode());
    String list = run(SBD.toString(), "-d", loop, "list");
    assertTrue(list.startsWith("0\tnode-a\tclear"), list);
    assertEquals("ok", monitor.condition(System.nanoTime()));
    long generation = slotView(0).generation();
    await().atMost(Duration.ofSeconds(5)).until(() -> slotView(0).generation() > generation);

    String host = run("uname", "-n").trim();
    run(SBD.toString(), "-d", loop, "message", "node-a", "reset");
    await().atMost(Duration.ofSeconds(5)).until(() -> monitor.state().poisonPill().isPresent());
    assertEquals(Optional.of("reset from " + host), monitor.state().poisonPill());
    assertTrue(run(SBD.toString(), "-d", loop, "list").startsWith("0\tnode-a\treset\t" + host));

    run(SBD.toString(), "-d", loop, "message", "node-a", "clear");
    await().atMost(Duration.ofSeconds(5)).until(() -> monitor.state().poisonPill().isEmpty());
  }

  /**
   * A msgwait written by {@code sbd create -4} is the one the agent compares: 2 s against the 17 s this node needs
   * (2 × 2 s + 2 s + 100 ms + 5 s + 5 s, rounded up) is flagged; the header recreated with {@code -4 17} is not.
   */
  @Test
  void aShortMsgwaitFromSbdCreateIsFlaggedUntilTheHeaderIsRecreatedWithTheAdvisedValue() throws Exception {
    run(SBD.toString(), "-d", loop, "-1", "2", "-2", "1", "-4", "2", "create");
    DiskTiming timing = new DiskTiming(Duration.ofMillis(100), Duration.ofSeconds(2));
    DiskMonitor monitor = new DiskMonitor(() -> DirectBlockDevice.open(Path.of(loop)), loop, "node-a", timing,
        MonotonicClock.system(), () -> new LocalView(new TreeSet<>(List.of("node-a")), 1, true, 3,
            new TreeSet<>(List.of("node-a")), new TreeSet<>(List.of("node-a"))), "node=node-a group=interop");
    monitor.msgwait().require(MsgwaitCheck.needed(timing, Duration.ofMillis(100), Duration.ofSeconds(5),
        Duration.ofSeconds(5)));
    Thread thread = new Thread(() -> monitor.run(running::get), "fencing-disk-test");
    thread.setDaemon(true);
    thread.start();

    await().atMost(Duration.ofSeconds(15)).until(() -> monitor.msgwait().tooShort() == 1
        && monitor.condition(System.nanoTime()).startsWith("ok, but"));
    assertTrue(monitor.condition(System.nanoTime()).startsWith("ok, but msgwait 2s is shorter than this node needs"
        + " to be reset after a poison pill (17s)"), monitor.condition(System.nanoTime()));
    assertTrue(monitor.condition(System.nanoTime()).contains("'sbd -d " + loop + " -4 17 create'"));

    run(SBD.toString(), "-d", loop, "-1", "2", "-2", "1", "-4", "17", "create");
    assertTrue(run(SBD.toString(), "-d", loop, "dump").contains("Timeout (msgwait)  : 17"));
    await().atMost(Duration.ofSeconds(15)).until(() -> monitor.msgwait().tooShort() == 0
        && monitor.condition(System.nanoTime()).equals("ok"));
  }

  @Test
  void aDeviceWeCreateIsOneSbdDumpsAllocatesOnAndLists() throws Exception {
    try (BlockDevice device = DirectBlockDevice.open(Path.of(loop))) {
      new SbdDevice(device).create(UUID.fromString("0f0e0d0c-0b0a-0908-0706-050403020100"));
    }
    String dump = run(SBD.toString(), "-d", loop, "dump");
    assertTrue(dump.contains("UUID               : 0f0e0d0c-0b0a-0908-0706-050403020100"), dump);
    assertTrue(dump.contains("Number of slots    : 255"), dump);
    assertTrue(dump.contains("Timeout (msgwait)  : 10"), dump);
    run(SBD.toString(), "-d", loop, "allocate", "node-x");
    assertTrue(run(SBD.toString(), "-d", loop, "list").startsWith("0\tnode-x\tclear"));
    try (BlockDevice device = DirectBlockDevice.open(Path.of(loop))) {
      SbdDevice sbd = new SbdDevice(device);
      assertEquals("node-x", sbd.readSlots(sbd.readHeader(), 1).get(0).slot().name());
    }
  }

  private SlotView slotView(int slot) throws Exception {
    try (BlockDevice device = DirectBlockDevice.open(Path.of(loop))) {
      SbdDevice sbd = new SbdDevice(device);
      return sbd.readSlots(sbd.readHeader(), slot + 1).get(slot).slot().view().orElseThrow();
    }
  }

  private static String run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException(String.join(" ", command) + ": no exit within 30s");
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.exitValue() != 0) {
      throw new IOException(String.join(" ", command) + ": exit " + p.exitValue() + ": " + out);
    }
    return out;
  }
}
