package dev.fencing.memberlist.codec;

import java.security.SecureRandom;
import java.util.Arrays;

/**
 * What one forged datagram costs the receive thread of an encrypted group: the label is the group's name (no secret),
 * so a packet carrying it is decrypted (AES-GCM, once per installed key) before it can be refused. Prints the mean cost
 * per packet and the packet rate that keeps one thread busy, for several sizes; run it with the JIT flags to compare
 * (the agent runs C1 only: {@code -XX:TieredStopAtLevel=1}, without the AES-GCM intrinsics C2 has).
 *
 * <pre>
 * java -XX:TieredStopAtLevel=1 -cp memberlist/target/test-classes:memberlist/target/classes:&lt;slf4j-api&gt; \
 *   dev.fencing.memberlist.codec.DecryptFloodBenchmark [seconds per size, default 4] [keys, default 1]
 * </pre>
 */
public final class DecryptFloodBenchmark {

  private DecryptFloodBenchmark() {}

  public static void main(String[] args) throws Exception {
    long seconds = args.length > 0 ? Long.parseLong(args[0]) : 4;
    int keys = args.length > 1 ? Integer.parseInt(args[1]) : 1;
    SecureRandom random = new SecureRandom();
    byte[][] keyBytes = new byte[keys][32];
    for (byte[] k : keyBytes) {
      random.nextBytes(k);
    }
    Keyring keyring = new Keyring(keyBytes[0], Arrays.copyOfRange(keyBytes, 1, keys));
    String label = "workers";
    PacketCodec codec = new PacketCodec(new PacketOptions(keyring, label, true, true));
    System.out.printf("JIT: %s; keys installed: %d%n", System.getProperty("java.vm.info"), keys);
    for (int size : new int[] {64, 512, 1400, 8192, 65000}) {
      byte[] packet = new byte[size];
      random.nextBytes(packet);
      packet[0] = (byte) MessageType.HAS_LABEL.code();
      packet[1] = (byte) label.length();
      System.arraycopy(label.getBytes(java.nio.charset.StandardCharsets.UTF_8), 0, packet, 2, label.length());
      packet[2 + label.length()] = 1; // encryption version 1 (GCM without padding)
      long warmEnd = System.nanoTime() + seconds * 500_000_000L;
      while (System.nanoTime() < warmEnd) {
        decodeRefused(codec, packet);
      }
      long n = 0;
      long start = System.nanoTime();
      long end = start + seconds * 1_000_000_000L;
      while (System.nanoTime() < end) {
        decodeRefused(codec, packet);
        n++;
      }
      double micros = (System.nanoTime() - start) / 1000.0 / n;
      System.out.printf("%6d-byte forged packet: %8.2f us each, one thread busy at %,9.0f packets/s (%,6.0f Mbit/s)%n",
          size, micros, 1e6 / micros, 1e6 / micros * size * 8 / 1e6);
    }
  }

  private static void decodeRefused(PacketCodec codec, byte[] packet) {
    try {
      codec.decode(packet);
      throw new IllegalStateException("a random packet decrypted");
    } catch (MalformedMessageException expected) {
      // refused, as every forged packet is
    }
  }
}
