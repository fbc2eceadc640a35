package dev.fencing.memberlist.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.memberlist.limits.Limit;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LzwTest {
  @Test
  void emptyInputIsClearThenEnd() throws Exception {
    // 9-bit codes 256 then 257, LSB first
    assertThat(Hex.of(Lzw.compress(new byte[0]))).isEqualTo("000302");
    assertThat(Lzw.decompress(Hex.bytes("000302"), 10)).isEmpty();
  }

  @Test
  void roundTripsInputsThatResetTheDictionary() throws Exception {
    Random random = new Random(42);
    for (int size : new int[] {1, 2, 255, 4096, 20_000, 200_000}) {
      byte[] noise = new byte[size];
      random.nextBytes(noise);
      assertThat(Lzw.decompress(Lzw.compress(noise), size)).isEqualTo(noise);
      byte[] text = new byte[size];
      for (int i = 0; i < size; i++) {
        text[i] = (byte) ('a' + (i * 7 + i / 13) % 26);
      }
      assertThat(Lzw.decompress(Lzw.compress(text), size)).isEqualTo(text);
    }
  }

  @Test
  void capsOutputAndRejectsBadStreams() {
    byte[] zeros = new byte[100_000];
    byte[] packed = Lzw.compress(zeros);
    assertThatThrownBy(() -> Lzw.decompress(packed, 99_999))
        .satisfies(StreamCodecTest.refusedBy(Limit.DECOMPRESSED_BYTES));
    assertThatThrownBy(() -> Lzw.decompress(new byte[] {0, 3}, 10)).hasMessageContaining("without an end code");
    // clear, then code 300 which is not yet defined
    assertThatThrownBy(() -> Lzw.decompress(new byte[] {0, 0x59, 0x02}, 10)).hasMessageContaining("invalid code");
  }

  @Test
  void compressingAPacketSizedInputAllocatesAFewKilobytesNotAFullDictionary() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    byte[] packet = new byte[300];
    new Random(7).nextBytes(packet);
    for (int i = 0; i < 50; i++) {
      Lzw.compress(packet);
    }
    long thread = Thread.currentThread().getId();
    long before = threads.getThreadAllocatedBytes(thread);
    for (int i = 0; i < 100; i++) {
      Lzw.compress(packet);
    }
    long perCall = (threads.getThreadAllocatedBytes(thread) - before) / 100;
    // Two 8192-entry int tables are 64 KiB; a 300-byte packet needs 1024 entries (8 KiB) and its output.
    assertThat(perCall).isLessThan(16 * 1024);
  }
}
