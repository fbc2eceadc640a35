package dev.fencing.memberlist.limits;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RefusalsTest {
  @Test
  void aFloodIsCountedInFullButLoggedOncePerInterval() {
    AtomicLong now = new AtomicLong(5);
    Refusals refusals = new Refusals("a", now::get);
    for (int i = 0; i < 10_000; i++) {
      refusals.refused(Limit.STREAM_MESSAGE_BYTES, "frame announces 20971520 bytes");
      now.addAndGet(100_000); // 10 000 refusals within one second
    }
    assertThat(refusals.count(Limit.STREAM_MESSAGE_BYTES)).isEqualTo(10_000);
    assertThat(refusals.logLines()).isEqualTo(1);

    now.addAndGet(Refusals.LOG_INTERVAL.toNanos());
    refusals.refused(Limit.STREAM_MESSAGE_BYTES, "again");
    refusals.refused(Limit.INBOUND_STREAMS, "another cap has its own interval");
    assertThat(refusals.logLines()).isEqualTo(3);
    assertThat(refusals.snapshot())
        .containsEntry(Limit.STREAM_MESSAGE_BYTES, 10_001L)
        .containsEntry(Limit.INBOUND_STREAMS, 1L)
        .containsEntry(Limit.DECOMPRESSED_BYTES, 0L)
        .hasSize(Limit.values().length);
  }
}
