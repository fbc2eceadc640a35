package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.agent.config.StandaloneConfig;
import dev.fencing.agent.config.StandaloneConfigLoader;
import dev.fencing.agent.disk.InMemoryBlockDevice;
import dev.fencing.agent.quorum.MonotonicClock;
import org.junit.jupiter.api.Test;

class SharedDiskTest {

  private static StandaloneConfig withDisk(String node) throws Exception {
    return StandaloneConfigLoader.parse("disk.yaml", "group: g\nexpected:\n  - {name: " + node
        + ", address: 127.0.0.1:7946}\nfencing:\n  mode: Watchdog\n  quorum: {tieBreakers: []}\n  timings: "
        + AgentCluster.FAST_TIMINGS + "\n  disk: {device: /dev/shared-lun, required: true}\n");
  }

  /**
   * A disk thread that cannot be built (here: a node name SBD cannot store) leaves the disk settings as they were, so
   * the same settings applied again try again and fail again, loudly. Before, the settings were stored first, and
   * the second apply found "nothing changed" and returned: no arbiter, no error, {@code required} not enforced.
   */
  @Test
  void aMonitorThatCannotBeBuiltStoresNothingSoTheNextApplyTriesAgain() throws Exception {
    String longName = "node-" + "x".repeat(59);
    InMemoryBlockDevice lun = InMemoryBlockDevice.sbdFormatted();
    SharedDisk disk = new SharedDisk(longName, MonotonicClock.system(), device -> lun, (thread, error) -> { });
    StandaloneConfig config = withDisk(longName);
    for (int attempt = 0; attempt < 2; attempt++) {
      assertThatThrownBy(() -> disk.apply(config.policy().disk(), config.policy().timings(), "node=x group=g"))
          .as("attempt %d", attempt).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("does not fit an SBD slot");
      assertThat(disk.monitor()).isEmpty();
    }
    disk.stop();
  }
}
