package dev.fencing.agent.watchdog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LinuxWatchdogDeviceTest {

  @TempDir Path sys;

  private LinuxWatchdogDevice device(RecordingLibc libc) {
    return new LinuxWatchdogDevice(Path.of("/dev/watchdog"), libc, new NowayoutProbe(sys));
  }

  @Test
  void aMissingDeviceNodeIsKnownWithoutOpeningIt() throws Exception {
    Path node = sys.resolve("watchdog");
    RecordingLibc libc = new RecordingLibc();
    LinuxWatchdogDevice device = new LinuxWatchdogDevice(node, libc, new NowayoutProbe(sys));

    assertThat(device.presenceProblem()).hasValueSatisfying(p -> assertThat(p).startsWith("missing: " + node)
        .contains("modprobe softdog"));
    Files.writeString(node, "");
    assertThat(device.presenceProblem()).isEmpty();
    assertThat(libc.calls).as("no open, no ioctl").isEmpty();
  }

  @Test
  void opensSetsTheTimeoutRoundedUpReadsItBackAndPings() throws Exception {
    RecordingLibc libc = new RecordingLibc();
    LinuxWatchdogDevice device = device(libc);
    assertThat(device.open(Duration.ofMillis(9_200))).isEqualTo(Duration.ofSeconds(10));
    assertThat(device.supportsIoctl()).isTrue();
    assertThat(libc.calls).containsExactly("open /dev/watchdog flags=0x80801", "ioctl GETSUPPORT",
        "ioctl SETTIMEOUT 10", "ioctl GETTIMEOUT", "ioctl KEEPALIVE");
    assertThat(device.timeLeft()).contains(Duration.ofSeconds(42));
  }

  @Test
  void aTimeoutTheDeviceCannotHonourIsRefusedAndTheDeviceReleasedWithMagicClose() {
    RecordingLibc libc = new RecordingLibc();
    libc.timeoutGranularity = 8;
    LinuxWatchdogDevice device = device(libc);
    assertThatThrownBy(() -> device.open(Duration.ofSeconds(10)))
        .isInstanceOf(WatchdogException.class)
        .hasMessageContaining("runs with a 16s timeout instead of the requested 10s")
        .hasMessageContaining("Software Watchdog");
    assertThat(libc.calls).endsWith("write V", "close");
    assertThat(device.isOpen()).isFalse();
  }

  @Test
  void keepaliveFallsBackToAWriteWhenTheIoctlIsRefused() throws Exception {
    RecordingLibc libc = new RecordingLibc();
    libc.failIoctl.put(WatchdogIoctl.WDIOC_KEEPALIVE, Libc.EINVAL);
    LinuxWatchdogDevice device = device(libc);
    device.open(Duration.ofSeconds(5));
    libc.calls.clear();
    device.keepalive();
    assertThat(libc.calls).containsExactly("ioctl KEEPALIVE", "write .");
  }

  @Test
  void magicCloseDisablesTheCardWritesVAndCloses() throws Exception {
    RecordingLibc libc = new RecordingLibc();
    LinuxWatchdogDevice device = device(libc);
    device.open(Duration.ofSeconds(5));
    libc.calls.clear();
    device.magicClose();
    assertThat(libc.calls).containsExactly("ioctl SETOPTIONS 1", "write V", "close");
    assertThat(device.isOpen()).isFalse();
  }

  @Test
  void closeWithoutMagicOnlyCloses() throws Exception {
    RecordingLibc libc = new RecordingLibc();
    LinuxWatchdogDevice device = device(libc);
    device.open(Duration.ofSeconds(5));
    libc.calls.clear();
    device.closeWithoutMagic();
    assertThat(libc.calls).containsExactly("close");
  }

  @Test
  void aDeviceWithoutIoctlsIsDrivenByWritesAlone() throws Exception {
    RecordingLibc libc = new RecordingLibc();
    libc.fifo = true;
    LinuxWatchdogDevice device = device(libc);
    assertThat(device.open(Duration.ofMillis(2_500))).isEqualTo(Duration.ofSeconds(3));
    assertThat(device.supportsIoctl()).isFalse();
    device.keepalive();
    assertThat(device.timeLeft()).isEmpty();
    device.magicClose();
    assertThat(libc.calls).containsExactly("open /dev/watchdog flags=0x80801", "ioctl GETSUPPORT", "write .",
        "write .", "write V", "close");
  }

  @Test
  void openFailuresSayWhatToDo() {
    RecordingLibc libc = new RecordingLibc();
    libc.openErrno = Libc.ENOENT;
    assertThatThrownBy(() -> device(libc).open(Duration.ofSeconds(5))).hasMessageContaining("modprobe softdog");
    libc.openErrno = Libc.EBUSY;
    assertThatThrownBy(() -> device(libc).open(Duration.ofSeconds(5))).hasMessageContaining("busy");
    libc.openErrno = Libc.ENXIO;
    assertThatThrownBy(() -> device(libc).open(Duration.ofSeconds(5))).hasMessageContaining("emulator");
  }

  @Test
  void nowayoutIsReadFromTheDevicesSysfsEntryThenFromSoftdog() throws Exception {
    NowayoutProbe probe = new NowayoutProbe(sys);
    assertThat(probe.read(Path.of("/dev/watchdog"))).isEmpty();
    Files.createDirectories(sys.resolve("module/softdog/parameters"));
    Files.writeString(sys.resolve("module/softdog/parameters/nowayout"), "Y\n");
    assertThat(probe.read(Path.of("/dev/watchdog"))).contains(true);
    Files.createDirectories(sys.resolve("class/watchdog/watchdog1"));
    Files.writeString(sys.resolve("class/watchdog/watchdog1/nowayout"), "0\n");
    assertThat(probe.read(Path.of("/dev/watchdog1"))).contains(false);
    assertThat(probe.read(Path.of("/tmp/agent-a/watchdog"))).as("a FIFO has no sysfs entry").isEmpty();
  }
}
