package dev.fencing.memberlist.state;

import static dev.fencing.memberlist.state.ProtocolHarness.VSN;
import static dev.fencing.memberlist.state.ProtocolHarness.address;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.NodeState;
import dev.fencing.memberlist.codec.AckResp;
import dev.fencing.memberlist.codec.Alive;
import dev.fencing.memberlist.codec.Dead;
import dev.fencing.memberlist.codec.IndirectPingReq;
import dev.fencing.memberlist.codec.Message;
import dev.fencing.memberlist.codec.NackResp;
import dev.fencing.memberlist.codec.Ping;
import dev.fencing.memberlist.codec.PushNodeState;
import dev.fencing.memberlist.codec.PushPull;
import dev.fencing.memberlist.codec.Suspect;
import dev.fencing.memberlist.codec.UserMsg;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Hostile but well-formed input: whatever peers claim, the state machine never throws and keeps probing. */
class SwimProtocolFuzzTest {
  private static final String[] NAMES = {"self", "peer-1", "peer-2", "peer-3", "ghost", "", null};

  private static byte[] bytes(SplittableRandom r) {
    return switch (r.nextInt(5)) {
      case 0 -> null;
      case 1 -> new byte[0];
      case 2 -> new byte[] {10, 0, 0, (byte) r.nextInt(8)};
      case 3 -> new byte[16];
      default -> new byte[r.nextInt(9)];
    };
  }

  private static String name(SplittableRandom r) {
    return NAMES[r.nextInt(NAMES.length)];
  }

  private static long number(SplittableRandom r) {
    return switch (r.nextInt(4)) {
      case 0 -> 0;
      case 1 -> 0xffffffffL;
      default -> r.nextInt(10);
    };
  }

  private static Message randomMessage(SplittableRandom r) {
    return switch (r.nextInt(10)) {
      case 0 -> new Ping(number(r), name(r), bytes(r), r.nextInt(3) * 7946, name(r));
      case 1 -> new IndirectPingReq(number(r), bytes(r), r.nextInt(2) * 7946, name(r), r.nextBoolean(), bytes(r), 7946, name(r));
      case 2 -> new AckResp(number(r), bytes(r));
      case 3 -> new NackResp(number(r));
      case 4 -> new Alive(number(r), name(r), bytes(r), r.nextInt(2) * 7946, bytes(r), r.nextBoolean() ? VSN : bytes(r));
      case 5 -> new Suspect(number(r), name(r), name(r));
      case 6 -> new Dead(number(r), name(r), name(r));
      case 7 -> new UserMsg(bytes(r));
      default -> new AckResp(number(r), null);
    };
  }

  private static PushPull randomPushPull(SplittableRandom r) {
    List<PushNodeState> nodes = new ArrayList<>();
    for (int i = r.nextInt(4); i > 0; i--) {
      nodes.add(new PushNodeState(name(r), bytes(r), 7946, bytes(r), number(r), r.nextInt(6) - 1, r.nextBoolean() ? VSN : bytes(r)));
    }
    return new PushPull(r.nextBoolean(), nodes, bytes(r) == null ? new byte[0] : new byte[3]);
  }

  @Test
  void arbitraryMessagesNeverBreakTheStateMachine() {
    long seed = 4242;
    SplittableRandom r = new SplittableRandom(seed);
    ProtocolHarness h = new ProtocolHarness(Config.defaultLocal().toBuilder().name("self").build(), seed);
    h.addPeer(1, VSN);
    h.addPeer(2, VSN);
    for (int i = 0; i < 20_000; i++) {
      if (r.nextInt(20) == 0) {
        h.protocol.mergeRemoteState(randomPushPull(r));
      } else {
        h.protocol.handleMessage(randomMessage(r), address(r.nextInt(4)));
      }
      if (i % 100 == 0) {
        h.run(50);
      }
    }
    // Whatever the fuzz did to the known peers, a newcomer is accepted and probed.
    h.protocol.handleMessage(new Alive(1, "fresh", new byte[] {10, 0, 0, 50}, 7946, null, VSN), address(50));
    h.run(20_000);
    assertThat(h.sentOf(Ping.class)).as("still probing, seed=%d", seed).anyMatch(p -> "fresh".equals(p.node()));
    assertThat(h.protocol.localNode().state()).as("seed=%d", seed).isEqualTo(NodeState.ALIVE);
  }
}
