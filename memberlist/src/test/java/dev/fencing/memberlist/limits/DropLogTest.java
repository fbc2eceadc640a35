package dev.fencing.memberlist.limits;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class DropLogTest {

  @Test
  void oneLinePerIntervalCarryingTheTotalAndWhatWasHidden() {
    AtomicLong now = new AtomicLong(1_000);
    DropLog log = new DropLog(now::get, Duration.ofSeconds(10));
    assertThat(log.dropped()).isEqualTo(new DropLog.Line(1, 0));
    for (int i = 0; i < 99; i++) {
      assertThat(log.dropped()).isNull();
    }
    now.addAndGet(Duration.ofSeconds(10).toNanos());
    assertThat(log.dropped()).isEqualTo(new DropLog.Line(101, 99));
    assertThat(log.dropped()).isNull();
    assertThat(log.total()).isEqualTo(102);
    assertThat(log.logLines()).isEqualTo(2);
  }
}
