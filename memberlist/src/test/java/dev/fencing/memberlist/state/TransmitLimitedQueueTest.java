package dev.fencing.memberlist.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TransmitLimitedQueueTest {

  @ParameterizedTest(name = "mult={0} n={1} -> {2}")
  @CsvSource({"3, 0, 0", "3, 1, 3", "3, 99, 6", "4, 9, 4", "4, 10, 8", "4, 100, 12", "4, 999, 12", "4, 1000, 16"})
  void retransmitLimitIsMultTimesCeilLog10OfNPlusOne(int mult, int n, int expected) {
    assertThat(TransmitLimitedQueue.retransmitLimit(mult, n)).isEqualTo(expected);
  }

  private static Broadcast msg(String node, String text, List<String> finished) {
    return new Broadcast(node, text.getBytes(StandardCharsets.UTF_8), () -> finished.add(node + ":" + text));
  }

  private static List<String> texts(List<byte[]> msgs) {
    List<String> out = new ArrayList<>();
    msgs.forEach(m -> out.add(new String(m, StandardCharsets.UTF_8)));
    return out;
  }

  @Test
  void newerBroadcastAboutTheSameNodeReplacesTheOlder() {
    List<String> finished = new ArrayList<>();
    TransmitLimitedQueue q = new TransmitLimitedQueue(4, () -> 10);
    q.queueBroadcast(msg("a", "alive-1", finished));
    q.queueBroadcast(msg("b", "alive-1", finished));
    q.queueBroadcast(msg("a", "suspect-1", finished));
    assertThat(q.numQueued()).isEqualTo(2);
    assertThat(finished).containsExactly("a:alive-1");
    assertThat(texts(q.getBroadcasts(2, 1000))).containsExactlyInAnyOrder("alive-1", "suspect-1");
  }

  @Test
  void prefersFewestTransmitsThenLargestThenNewest() {
    List<String> finished = new ArrayList<>();
    TransmitLimitedQueue q = new TransmitLimitedQueue(4, () -> 10);
    q.queueBroadcast(msg("a", "xx", finished));
    q.queueBroadcast(msg("b", "yyyy", finished));
    q.queueBroadcast(msg("c", "zz", finished));
    assertThat(texts(q.getBroadcasts(0, 1000))).containsExactly("yyyy", "zz", "xx");
    q.queueBroadcast(msg("d", "w", finished));
    // d has never been sent: it goes first, even though it is the smallest
    assertThat(texts(q.getBroadcasts(0, 1000))).containsExactly("w", "yyyy", "zz", "xx");
  }

  @Test
  void selectionRespectsTheByteLimitIncludingPerMessageOverhead() {
    List<String> finished = new ArrayList<>();
    TransmitLimitedQueue q = new TransmitLimitedQueue(4, () -> 10);
    q.queueBroadcast(msg("a", "aaaaaaaaaa", finished)); // 10
    q.queueBroadcast(msg("b", "bbbbbb", finished)); // 6
    q.queueBroadcast(msg("c", "ccc", finished)); // 3
    // limit 20, overhead 2: 10+2 = 12, then 6+2 = 8 -> 20; ccc no longer fits
    assertThat(texts(q.getBroadcasts(2, 20))).containsExactly("aaaaaaaaaa", "bbbbbb");
    // now ccc has 0 transmits and goes first
    assertThat(texts(q.getBroadcasts(2, 20))).containsExactly("ccc", "aaaaaaaaaa");
  }

  @Test
  void broadcastIsDroppedAndFinishedAfterTheRetransmitLimit() {
    List<String> finished = new ArrayList<>();
    AtomicInteger n = new AtomicInteger(5); // limit = 4 * ceil(log10(6)) = 4
    TransmitLimitedQueue q = new TransmitLimitedQueue(4, n::get);
    q.queueBroadcast(msg("a", "m", finished));
    int sent = 0;
    while (!q.getBroadcasts(2, 100).isEmpty()) {
      sent++;
    }
    assertThat(sent).isEqualTo(4);
    assertThat(finished).containsExactly("a:m");
    assertThat(q.numQueued()).isZero();
  }

  @Test
  void resetFinishesEverything() {
    List<String> finished = new ArrayList<>();
    TransmitLimitedQueue q = new TransmitLimitedQueue(4, () -> 10);
    q.queueBroadcast(msg("a", "1", finished));
    q.queueBroadcast(msg("b", "2", finished));
    q.reset();
    assertThat(finished).containsExactlyInAnyOrder("a:1", "b:2");
    assertThat(q.getBroadcasts(2, 100)).isEmpty();
  }
}
