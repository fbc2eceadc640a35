package dev.fencing.agent.watchdog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.emulator.EmulatedWatchdog;
import dev.fencing.agent.emulator.WatchdogEventLog;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real device code (JNA libc, ENOTTY fallback to writes) on a FIFO read by the softdog emulator: feeds are seen,
 * a magic close disarms, a close without it lets the timer run out and the reset command fires.
 */
class FifoWatchdogWithEmulatorTest {

  @TempDir Path dir;

  @Test
  void feedsMagicCloseAndStarvationThroughTheEmulator() throws Exception {
    Path fifo = dir.resolve("watchdog");
    Path resetMarker = dir.resolve("reset");
    ByteArrayOutputStream lines = new ByteArrayOutputStream();
    try (WatchdogEventLog log = new WatchdogEventLog(new PrintStream(lines, true, StandardCharsets.UTF_8), null,
            InstantSource.system());
        // 3 s: the timer must not run out between arming and the feeds below on a loaded machine.
        EmulatedWatchdog emulator = new EmulatedWatchdog(fifo, Duration.ofSeconds(3), false,
            "touch '" + resetMarker + "'", log)) {
      emulator.start();
      LinuxWatchdogDevice device = new LinuxWatchdogDevice(fifo, JnaLibc.load(), new NowayoutProbe(dir));
      assertThat(device.nowayout()).isEmpty();
      await().atMost(Duration.ofSeconds(5)).ignoreExceptionsInstanceOf(WatchdogException.class)
          .until(() -> device.open(Duration.ofMillis(800)).equals(Duration.ofSeconds(1)));
      assertThat(device.supportsIoctl()).as("a FIFO answers ioctls with ENOTTY").isFalse();
      await().atMost(Duration.ofSeconds(5)).until(emulator::running);
      for (int i = 0; i < 5; i++) {
        device.keepalive();
      }
      await().atMost(Duration.ofSeconds(5)).until(() -> lines.toString(StandardCharsets.UTF_8).contains("\"feed"));

      device.magicClose();
      await().atMost(Duration.ofSeconds(5)).until(() -> !emulator.running());
      // Longer than the emulator's timeout: a timer left running by the close would fire inside this window.
      await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(6)).until(() -> emulator.resets() == 0);
      assertThat(lines.toString(StandardCharsets.UTF_8)).contains("disarmed");

      await().atMost(Duration.ofSeconds(5)).ignoreExceptionsInstanceOf(WatchdogException.class)
          .until(() -> device.open(Duration.ofMillis(800)) != null);
      device.closeWithoutMagic();
      await().atMost(Duration.ofSeconds(10)).until(() -> emulator.resets() == 1 && Files.exists(resetMarker));
      assertThatThrownBy(device::keepalive).isInstanceOf(WatchdogException.class).hasMessageContaining("closed");
    }
  }

  @Test
  void aFifoWithoutReaderIsAReportedConditionNotAHang() {
    Path fifo = dir.resolve("nobody-reads");
    assertThat(fifo.toFile().exists()).isFalse();
    LinuxWatchdogDevice missing = new LinuxWatchdogDevice(fifo, JnaLibc.load(), new NowayoutProbe(dir));
    assertThatThrownBy(() -> missing.open(Duration.ofSeconds(5))).isInstanceOf(WatchdogException.class)
        .hasMessageContaining("missing");
  }
}
