package dev.fencing.agent.watchdog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class WatchdogMetricsTest {

  private static WatchdogStatus status(boolean unavailable) {
    return new WatchdogStatus(false, false, false, List.of(), OptionalLong.empty(), 0, "x", Optional.empty(),
        unavailable);
  }

  @Test
  void theUnavailableGaugeFollowsTheStatusAndFailedOpensAreCounted() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RecordingWatchdogDevice device = new RecordingWatchdogDevice();
    WatchdogFeeder feeder = new WatchdogFeeder(device, () -> 0L, "node=a");
    AtomicReference<WatchdogStatus> status = new AtomicReference<>(status(true));
    WatchdogMetrics.register(registry, status::get, feeder);

    assertThat(registry.get("fencing.watchdog.unavailable").gauge().value()).isEqualTo(1.0);
    status.set(status(false));
    assertThat(registry.get("fencing.watchdog.unavailable").gauge().value()).isEqualTo(0.0);

    device.missing(true);
    assertThatThrownBy(() -> feeder.open(Duration.ofSeconds(10), 0)).isInstanceOf(WatchdogException.class);
    assertThatThrownBy(() -> feeder.open(Duration.ofSeconds(10), 0)).isInstanceOf(WatchdogException.class);
    assertThat(registry.get("fencing.watchdog.open.failures").functionCounter().count()).isEqualTo(2.0);
  }
}
