package dev.fencing.memberlist.state;

import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.codec.Alive;
import dev.fencing.memberlist.codec.MalformedMessageException;
import dev.fencing.memberlist.codec.Message;
import dev.fencing.memberlist.codec.MessageCodec;
import dev.fencing.memberlist.codec.Ping;
import dev.fencing.memberlist.codec.PushPull;
import dev.fencing.memberlist.sim.VirtualTime;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/** One {@link SwimProtocol} on virtual time whose output is recorded, for tests that play its peers by hand. */
final class ProtocolHarness implements ProtocolOutput {
  static final long MS = 1_000_000L;
  static final byte[] VSN = {1, 5, 2, 0, 0, 0};
  static final byte[] SELF_IP = {10, 0, 0, 100};

  record Sent(InetSocketAddress to, List<Message> messages, boolean crc) {}

  record StreamPing(InetSocketAddress to, Ping ping, long timeoutNanos) {}

  final VirtualTime time = new VirtualTime();
  final ProtocolCounters counters = new ProtocolCounters();
  final List<Sent> sent = new ArrayList<>();
  final List<StreamPing> streamPings = new ArrayList<>();
  final List<PushPull> pushPulls = new ArrayList<>();
  final SwimProtocol protocol;

  ProtocolHarness(Config config, long seed) {
    protocol =
        new SwimProtocol(
            config, SELF_IP, 7946, time, time, new SplittableRandom(seed), MessageCodec::encode, this, counters);
    protocol.start();
  }

  static InetSocketAddress address(int i) {
    try {
      return new InetSocketAddress(InetAddress.getByAddress(new byte[] {10, 0, 0, (byte) i}), 7946);
    } catch (UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Makes peer-i known as alive at incarnation 1 with the given Vsn. */
  void addPeer(int i, byte[] vsn) {
    protocol.handleMessage(
        new Alive(1, "peer-" + i, address(i).getAddress().getAddress(), 7946, null, vsn), address(i));
  }

  void run(long millis) {
    time.runUntil(time.nanos() + millis * MS);
  }

  /** Advances time 1 ms at a time until the next probe ping goes out (probe ticks start at a random stagger). */
  Ping awaitProbe() {
    int before = sentOf(Ping.class).size();
    for (int i = 0; i < 20_000; i++) {
      run(1);
      List<Ping> pings = sentOf(Ping.class);
      if (pings.size() > before) {
        return pings.get(pings.size() - 1);
      }
    }
    throw new AssertionError("no probe within 20 s");
  }

  /** Every message sent so far of the given type, in order. */
  <T extends Message> List<T> sentOf(Class<T> type) {
    List<T> out = new ArrayList<>();
    for (Sent s : sent) {
      for (Message m : s.messages) {
        if (type.isInstance(m)) {
          out.add(type.cast(m));
        }
      }
    }
    return out;
  }

  @Override
  public void sendPacket(InetSocketAddress to, List<byte[]> messages, boolean crc) {
    List<Message> decoded = new ArrayList<>();
    for (byte[] m : messages) {
      try {
        decoded.add(MessageCodec.decode(m));
      } catch (MalformedMessageException e) {
        throw new AssertionError("protocol sent an undecodable message", e);
      }
    }
    sent.add(new Sent(to, decoded, crc));
  }

  @Override
  public void pushPull(InetSocketAddress to, PushPull request) {
    pushPulls.add(request);
  }

  @Override
  public void streamPing(InetSocketAddress to, Ping ping, long timeoutNanos) {
    streamPings.add(new StreamPing(to, ping, timeoutNanos));
  }
}
