package dev.fencing.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Duration;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.fencing.v1.PeerMemberState;
import dev.fencing.proto.fencing.v1.PeerStatus;
import dev.fencing.proto.fencing.v1.QuorumLossAction;
import dev.fencing.proto.fencing.v1.TieBreaker;
import dev.fencing.proto.fencing.v1.Timings;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** DRBD's fence-peer contract from the agent's view: which peer, and when it is safe to say "fenced". */
class DrbdFencePeerTest {

  private static final Map<String, String> DRBD9 = Map.of("DRBD_RESOURCE", "r0", "DRBD_PEER_NODE_ID", "1",
      "DRBD_NODE_ID_0", "alpha", "DRBD_NODE_ID_1", "beta", "DRBD_MY_NODE_ID", "0");

  static Duration seconds(long s) {
    return Duration.newBuilder().setSeconds(s).build();
  }

  /** Agent alpha, holding quorum in a Watchdog + Fence group, safe-to-assume-fenced 68s; peer beta as given. */
  static AgentStatus alphaSeeing(PeerMemberState beta, long heardSecondsAgo, boolean confirmed) {
    return AgentStatus.newBuilder().setNode("alpha").setGroup("storage")
        .setMode(FencingMode.FENCING_MODE_WATCHDOG).setQuorumLossAction(QuorumLossAction.QUORUM_LOSS_ACTION_FENCE)
        .setQuorumHeld(true).setArmed(true).setExpected(3).setHeard(2).setQuorumSize(2)
        .addPeers(PeerStatus.newBuilder().setName("beta").setMemberState(beta).setConfirmed(confirmed)
            .setSinceLastHeard(seconds(heardSecondsAgo)).putAddresses("InternalIP", "198.18.5.2"))
        .addPeers(PeerStatus.newBuilder().setName("gamma").setMemberState(PeerMemberState.PEER_MEMBER_STATE_ALIVE)
            .setConfirmed(true).setSinceLastHeard(seconds(0)).putAddresses("InternalIP", "198.18.5.3"))
        .setTimings(Timings.newBuilder().setSafeToAssumeFencedDelay(seconds(68)))
        .build();
  }

  private static DrbdFencePeer.Verdict decide(Map<String, String> env, AgentStatus status) {
    return DrbdFencePeer.decide(DrbdFencePeer.Target.fromEnvironment(env), status);
  }

  @Test
  void aPeerGoneForTheSafeDelayIsFenced() {
    DrbdFencePeer.Verdict v = decide(DRBD9, alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_LEFT, 69, false));
    assertThat(v.code()).isEqualTo(DrbdFencePeer.FENCED);
    assertThat(v.message()).startsWith("fenced: beta (Left, last heard 1m9s ago) >= safe-to-assume-fenced 1m8s");
    assertThat(decide(DRBD9, alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_DEAD, 100, false)).code())
        .isEqualTo(DrbdFencePeer.FENCED);
  }

  @Test
  void aPeerGoneForLessThanTheSafeDelayIsNotFencedYetAndWorthWaitingFor() {
    DrbdFencePeer.Verdict v = decide(DRBD9, alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_LEFT, 60, false));
    assertThat(v.code()).isEqualTo(DrbdFencePeer.NOT_FENCED);
    assertThat(v.settled()).isFalse();
    assertThat(v.message()).contains("8000 ms to go");
    assertThat(decide(DRBD9, alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_SUSPECT, 90, false)).settled())
        .as("suspect is not gone yet").isFalse();
  }

  @Test
  void aPeerTheAgentStillHearsIsNotFenced() {
    DrbdFencePeer.Verdict v = decide(DRBD9, alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_ALIVE, 0, true));
    assertThat(v.code()).isEqualTo(DrbdFencePeer.NOT_FENCED);
    assertThat(v.settled()).isTrue();
    assertThat(v.message()).contains("peer beta is alive");
  }

  @Test
  void anAgentWithoutQuorumOrAGroupThatDoesNotFenceNeverSaysFenced() {
    AgentStatus gone = alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_LEFT, 500, false);
    assertThat(decide(DRBD9, gone.toBuilder().setQuorumHeld(false).build()).message())
        .contains("does not hold quorum");
    assertThat(decide(DRBD9, gone.toBuilder().setQuorumLossAction(QuorumLossAction.QUORUM_LOSS_ACTION_EXCLUDE)
        .build()).code()).isEqualTo(DrbdFencePeer.NOT_FENCED);
    assertThat(decide(DRBD9, gone.toBuilder().setMode(FencingMode.FENCING_MODE_NOTIFY).build()).code())
        .isEqualTo(DrbdFencePeer.NOT_FENCED);
  }

  /**
   * A two-node group split in halves: each side holds quorum only through its tie-breaker. With APIReachable both
   * may (both reach the API server), and with a quorumSize of half the group both do; only a tie-breaker that
   * answers one side lets this side say the other is fenced.
   */
  @Test
  void aQuorumThatDoesNotExcludeThePeersSideNeverSaysFenced() {
    AgentStatus half = alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_DEAD, 500, false).toBuilder()
        .setExpected(2).setHeard(1).setQuorumSize(2).removePeers(1).build();
    AgentStatus apiReachable = half.toBuilder().addTieBreakers(TieBreaker.TIE_BREAKER_API_REACHABLE).build();
    DrbdFencePeer.Verdict v = decide(DRBD9, apiReachable);
    assertThat(v.code()).isEqualTo(DrbdFencePeer.NOT_FENCED);
    assertThat(v.settled()).isTrue();
    assertThat(v.message()).contains("only through tie-breaker APIReachable (heard 1 of 2, quorum 2)")
        .contains("the peer's side may hold it too");
    assertThat(decide(DRBD9, half).code()).as("no tie-breaker named").isEqualTo(DrbdFencePeer.NOT_FENCED);
    for (TieBreaker safe : new TieBreaker[] {TieBreaker.TIE_BREAKER_CONTROL_PLANE, TieBreaker.TIE_BREAKER_LOWEST_NAME,
        TieBreaker.TIE_BREAKER_DISK}) {
      assertThat(decide(DRBD9, half.toBuilder().addTieBreakers(safe).build()).code()).as(safe.name())
          .isEqualTo(DrbdFencePeer.FENCED);
    }
    AgentStatus smallQuorum = alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_DEAD, 500, false).toBuilder()
        .setExpected(4).setHeard(3).setQuorumSize(2).build();
    assertThat(decide(DRBD9, smallQuorum).message()).contains("quorum size is half the group or less");
  }

  @Test
  void drbd84VariablesAndThePeerAddressMapToTheMember() {
    AgentStatus gone = alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_DEAD, 100, false);
    assertThat(decide(Map.of("DRBD_PEERS", "beta", "DRBD_PEER", "beta"), gone).code())
        .isEqualTo(DrbdFencePeer.FENCED);
    // DRBD's host name differs from the Kubernetes node name: the address decides.
    assertThat(decide(Map.of("DRBD_PEER", "beta.storage.lan", "DRBD_PEER_ADDRESS", "198.18.5.2:7789"), gone)
        .code()).isEqualTo(DrbdFencePeer.FENCED);
    assertThat(decide(Map.of("DRBD_PEER_ADDRESS", "198.18.5.2"), gone).code()).isEqualTo(DrbdFencePeer.FENCED);
    assertThat(decide(Map.of("DRBD_PEER", "delta"), gone).message()).contains("DRBD peer delta is not a member");
    assertThat(decide(Map.of("DRBD_RESOURCE", "r0"), gone).message()).contains("names no peer");
  }

  @Test
  void everyNamedPeerMustBeFenced() {
    AgentStatus betaGone = alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_DEAD, 100, false);
    assertThat(decide(Map.of("DRBD_PEERS", "beta gamma"), betaGone).message()).contains("peer gamma is alive");
  }
}
