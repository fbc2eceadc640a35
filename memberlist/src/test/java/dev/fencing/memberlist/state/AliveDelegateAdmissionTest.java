package dev.fencing.memberlist.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.Node;
import dev.fencing.memberlist.NodeState;
import dev.fencing.memberlist.codec.Alive;
import dev.fencing.memberlist.codec.PushNodeState;
import dev.fencing.memberlist.codec.PushPull;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * An {@link dev.fencing.memberlist.AliveDelegate} that refuses a node keeps it out of the node table whichever way
 * it is announced (an alive packet or a push/pull merge), so a flood of invented names cannot grow the table.
 */
class AliveDelegateAdmissionTest {
  private static final long SEED = 4242L;
  private static final Set<String> ADMITTED = Set.of("peer-1", "peer-2", "peer-3");

  @Test
  void aFloodOfAliveMessagesAndPushPullEntriesWithRandomNamesLeavesTheNodeTableBoundedByTheAdmittedSet() {
    AtomicInteger vetoed = new AtomicInteger();
    Config config = Config.defaultLan().toBuilder().name("self").aliveDelegate((Node peer) -> {
      boolean ok = ADMITTED.contains(peer.name())
          && peer.address().equals(ProtocolHarness.address(Integer.parseInt(peer.name().substring(5))));
      if (!ok) {
        vetoed.incrementAndGet();
      }
      return ok;
    }).build();
    ProtocolHarness h = new ProtocolHarness(config, SEED);
    for (int i = 1; i <= 3; i++) {
      h.addPeer(i, ProtocolHarness.VSN);
    }
    SplittableRandom random = new SplittableRandom(SEED);
    for (int i = 0; i < 10_000; i++) {
      byte[] addr = {10, 1, (byte) random.nextInt(256), (byte) random.nextInt(256)};
      h.protocol.handleMessage(new Alive(1, "stranger-" + random.nextLong(), addr, 7946, null, ProtocolHarness.VSN),
          ProtocolHarness.address(200));
    }
    // An expected name at another address is refused as well.
    h.protocol.handleMessage(new Alive(9, "peer-2", new byte[] {10, 9, 9, 9}, 7946, null, ProtocolHarness.VSN),
        ProtocolHarness.address(200));
    List<PushNodeState> remote = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      remote.add(new PushNodeState("merged-" + random.nextLong(), new byte[] {10, 2, 0, (byte) i}, 7946, null, 1,
          NodeState.ALIVE.wireValue(), ProtocolHarness.VSN));
    }
    assertThat(h.protocol.mergeRemoteState(new PushPull(false, remote, new byte[0]))).isNull();
    assertThat(h.protocol.mergeRemoteState(new PushPull(true, remote, new byte[0]))).isNull();

    assertThat(h.protocol.allNodes()).extracting(Node::name)
        .as("seed %d", SEED).containsExactlyInAnyOrder("self", "peer-1", "peer-2", "peer-3");
    assertThat(h.protocol.node("peer-2").address()).isEqualTo(ProtocolHarness.address(2));
    assertThat(vetoed.get()).isEqualTo(10_000 + 1 + 2 * 1_000);
  }
}
