package dev.fencing.agent.runtime;

import dev.fencing.agent.membership.ExpectedPeers;
import dev.fencing.agent.membership.GossipListener;
import dev.fencing.agent.membership.GossipMember;
import dev.fencing.agent.membership.GossipMembership;
import dev.fencing.agent.membership.GossipTraffic;
import dev.fencing.agent.membership.NodeMeta;
import dev.fencing.policy.ResolvedTimings;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A real gossip membership behind the seam, which a test can make block (as if memberlist's lock were held by a slow
 * protocol task), throw an Error on its receive thread, or fail a config's {@code expectMembers}.
 */
final class BlockingGossip implements GossipMembership {

  private final GossipMembership real;
  private volatile CountDownLatch release = new CountDownLatch(0);
  private volatile CountDownLatch entered = new CountDownLatch(1);
  private volatile Error poison;
  private volatile RuntimeException expectMembersFailure;

  BlockingGossip(GossipMembership real) {
    this.real = real;
  }

  /** From now on sends, joins and member-list reads wait until {@link #release()} (at most 30 s). */
  void block() {
    entered = new CountDownLatch(1);
    release = new CountDownLatch(1);
  }

  /** Waits until some thread is blocked in this gossip. */
  boolean awaitBlockedCaller(long seconds) throws InterruptedException {
    return entered.await(seconds, TimeUnit.SECONDS);
  }

  void release() {
    release.countDown();
  }

  /** The next user message received is answered by throwing {@code error} on gossip's receive thread. */
  void poisonNextMessage(Error error) {
    poison = error;
  }

  /** The next {@link #expectMembers} throws {@code failure} (a bug while a config is applied). */
  void failNextExpectMembers(RuntimeException failure) {
    expectMembersFailure = failure;
  }

  private void waitIfBlocked() {
    CountDownLatch r = release;
    if (r.getCount() > 0) {
      entered.countDown();
      try {
        r.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void start(GossipListener listener) throws IOException {
    real.start(new GossipListener() {
      @Override
      public void onUserMessage(byte[] message, InetSocketAddress from, long receivedNanos) {
        Error e = poison;
        if (e != null) {
          poison = null;
          throw e;
        }
        listener.onUserMessage(message, from, receivedNanos);
      }

      @Override
      public void onMemberChange(GossipMember member) {
        listener.onMemberChange(member);
      }

      @Override
      public void onUnexpectedMember(String name, String hostPort) {
        listener.onUnexpectedMember(name, hostPort);
      }
    });
  }

  @Override
  public int join(List<String> hostPorts) {
    waitIfBlocked();
    return real.join(hostPorts);
  }

  @Override
  public List<GossipMember> members() {
    waitIfBlocked();
    return real.members();
  }

  @Override
  public void sendTo(InetSocketAddress address, byte[] message) {
    waitIfBlocked();
    real.sendTo(address, message);
  }

  @Override
  public void updateMeta(NodeMeta meta, Duration timeout) {
    real.updateMeta(meta, timeout);
  }

  @Override
  public void applyTimings(ResolvedTimings timings) {
    real.applyTimings(timings);
  }

  @Override
  public void applyKeys(List<byte[]> keys) {
    real.applyKeys(keys);
  }

  @Override
  public void expectMembers(ExpectedPeers expected) {
    RuntimeException failure = expectMembersFailure;
    if (failure != null) {
      expectMembersFailure = null;
      throw failure;
    }
    real.expectMembers(expected);
  }

  @Override
  public GossipTraffic traffic() {
    return real.traffic();
  }

  @Override
  public void leaveAndClose(Duration timeout) {
    release();
    real.leaveAndClose(timeout);
  }
}
