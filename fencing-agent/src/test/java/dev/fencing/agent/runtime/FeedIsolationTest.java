package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.quorum.MonotonicClock;
import dev.fencing.agent.watchdog.RecordingWatchdogDevice;
import dev.fencing.agent.watchdog.WatchdogDevice;
import dev.fencing.agent.watchdog.WatchdogException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The feed is isolated (ARCHITECTURE §5): real agents on loopback, one of them with a blocked gossip, a stalled
 * quorum thread, or an Error in one of its loops.
 */
class FeedIsolationTest {

  /** As the fast timings, with a 3 s quorum window: a 1.5 s block is 7 feed intervals but half the window. */
  static final String WIDE_WINDOW = AgentCluster.FAST_TIMINGS.replace("quorumWindow: 600ms", "quorumWindow: 3s")
      .replace("armingDelay: 1s", "armingDelay: 3s");

  /**
   * As the fast timings, with a 6 s quorum window: a sender blocked in gossip gets no round trips, so its own verdict
   * lasts one window from the block; the feeds awaited under it (up to 3 s each on a loaded machine) must fit.
   */
  static final String BLOCKED_SENDER_WINDOW = AgentCluster.FAST_TIMINGS
      .replace("quorumWindow: 600ms", "quorumWindow: 6s").replace("armingDelay: 1s", "armingDelay: 6s");

  private static final long MS = 1_000_000L;

  /** Where an Error went: the thread and the Error. */
  private record Fatal(String thread, Error error) {}

  @Test
  void feedsContinueWhileGossipBlocksLongerThanTheFeedInterval() throws Exception {
    Map<String, BlockingGossip> gossip = new ConcurrentHashMap<>();
    AgentCluster.Hooks hooks = blockableGossip(gossip);
    try (AgentCluster cluster = AgentCluster.startWithHooks(3, BLOCKED_SENDER_WINDOW, hooks)) {
      AgentCluster.Agent a = cluster.agent("node-a");
      await().atMost(Duration.ofSeconds(30)).until(() -> cluster.agents.stream()
          .allMatch(x -> x.agent().snapshot().watchdog().armed()));
      BlockingGossip blocking = gossip.get("node-a");
      blocking.block();
      try {
        assertThat(blocking.awaitBlockedCaller(5)).as("a heartbeat send is stuck in gossip").isTrue();
        long blockedAt = System.nanoTime();
        long before = a.device().keepalives();
        // Feed interval 200 ms: three feeds while the send stays stuck (on the old code the tick was stuck in it).
        await().atMost(Duration.ofSeconds(3)).until(() -> a.device().keepalives() >= before + 3);
        // And the quorum loop itself keeps ticking: nothing on it waits for gossip.
        await().atMost(Duration.ofSeconds(3)).until(() -> a.agent().snapshot().takenAtNanos() - blockedAt
            > 500 * MS);
        assertThat(a.agent().snapshot().watchdog().fencingInProgress()).isFalse();
        assertThat(a.agent().snapshot().quorumHeld()).isTrue();
      } finally {
        blocking.release();
      }
    }
  }

  @Test
  void whenTheQuorumThreadStallsTheFeederFeedsUpToItsLastDeadlineAndNeverPastIt() throws Exception {
    AtomicBoolean stall = new AtomicBoolean();
    CountDownLatch stalled = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    MonotonicClock stallable = () -> {
      if (stall.get() && Thread.currentThread().getName().equals("fencing-quorum")) {
        stalled.countDown();
        try {
          resume.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return System.nanoTime();
    };
    AgentCluster.Hooks hooks = new AgentCluster.Hooks(
        name -> name.equals("node-a") ? stallable : MonotonicClock.system(), (name, g) -> g, (name, d) -> d,
        (thread, error) -> { });
    try (AgentCluster cluster = AgentCluster.startWithHooks(3, WIDE_WINDOW, hooks)) {
      AgentCluster.Agent a = cluster.agent("node-a");
      await().atMost(Duration.ofSeconds(30)).until(() -> a.agent().snapshot().watchdog().armed());
      stall.set(true);
      try {
        assertThat(stalled.await(5, TimeUnit.SECONDS)).isTrue();
        long stalledAt = System.nanoTime();
        // The stalled tick never published anything newer than the verdict of the last completed tick.
        long deadline = a.agent().snapshot().verdict().orElseThrow().heldUntilNanos();
        await().atMost(Duration.ofSeconds(10)).until(() -> System.nanoTime() - deadline > 600 * MS);

        List<Long> afterStall = a.device().feedTimes().stream().filter(t -> t > stalledAt).toList();
        assertThat(afterStall).as("the feeder keeps feeding on the last verdict").hasSizeGreaterThanOrEqualTo(3);
        assertThat(afterStall).as("never at or after the published deadline").allMatch(t -> t < deadline);
        assertThat(deadline - stalledAt).as("the deadline is the verdict's heldUntil, within the window")
            .isLessThanOrEqualTo(3_000 * MS);
      } finally {
        stall.set(false);
        resume.countDown();
      }
    }
  }

  @Test
  void anErrorInTheQuorumLoopEndsTheProcess() throws Exception {
    AtomicBoolean broken = new AtomicBoolean();
    AtomicReference<Fatal> fatal = new AtomicReference<>();
    MonotonicClock breakable = () -> {
      if (broken.get() && Thread.currentThread().getName().equals("fencing-quorum")) {
        throw new StackOverflowError("test: quorum loop");
      }
      return System.nanoTime();
    };
    AgentCluster.Hooks hooks = new AgentCluster.Hooks(name -> breakable, (name, g) -> g, (name, d) -> d,
        (thread, error) -> fatal.compareAndSet(null, new Fatal(thread, error)));
    try (AgentCluster cluster = AgentCluster.startWithHooks(1, AgentCluster.FAST_TIMINGS, hooks)) {
      AgentCluster.Agent a = cluster.agent("node-a");
      await().atMost(Duration.ofSeconds(10)).until(() -> a.agent().snapshot().quorumHeld());
      broken.set(true);
      await().atMost(Duration.ofSeconds(5)).until(() -> fatal.get() != null);
      assertThat(fatal.get().thread()).isEqualTo("fencing-quorum");
      assertThat(fatal.get().error()).hasMessage("test: quorum loop");
    }
  }

  @Test
  void anErrorInTheFeederEndsTheProcess() throws Exception {
    AtomicBoolean broken = new AtomicBoolean();
    AtomicReference<Fatal> fatal = new AtomicReference<>();
    AgentCluster.Hooks hooks = new AgentCluster.Hooks(name -> MonotonicClock.system(), (name, g) -> g,
        (name, d) -> new FailingKeepalive(d, broken),
        (thread, error) -> fatal.compareAndSet(null, new Fatal(thread, error)));
    try (AgentCluster cluster = AgentCluster.startWithHooks(1, AgentCluster.FAST_TIMINGS, hooks)) {
      AgentCluster.Agent a = cluster.agent("node-a");
      await().atMost(Duration.ofSeconds(10)).until(() -> a.agent().snapshot().watchdog().armed());
      broken.set(true);
      await().atMost(Duration.ofSeconds(5)).until(() -> fatal.get() != null);
      assertThat(fatal.get().thread()).isEqualTo("fencing-feeder");
      assertThat(fatal.get().error()).isInstanceOf(OutOfMemoryError.class);
    }
  }

  @Test
  void anErrorOnTheGossipReceiveThreadEndsTheProcessThroughTheDefaultHandler() throws Exception {
    AtomicReference<Fatal> fatal = new AtomicReference<>();
    Map<String, BlockingGossip> gossip = new ConcurrentHashMap<>();
    AgentCluster.Hooks hooks = blockableGossip(gossip);
    Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
    // What RunCommand installs, with a recording handler instead of halting this JVM.
    Thread.setDefaultUncaughtExceptionHandler(
        FatalErrors.uncaught((thread, error) -> fatal.compareAndSet(null, new Fatal(thread, error))));
    try (AgentCluster cluster = AgentCluster.startWithHooks(2, AgentCluster.FAST_TIMINGS, hooks)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> cluster.agent("node-a").agent().snapshot().quorumHeld());
      StackOverflowError poison = new StackOverflowError("test: gossip receive");
      gossip.get("node-a").poisonNextMessage(poison);
      // Awaitility would otherwise install its own default handler while it waits.
      await().dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(5)).until(() -> fatal.get() != null);
      assertThat(fatal.get().error()).isSameAs(poison);
      assertThat(fatal.get().thread()).doesNotStartWith("fencing-");
    } finally {
      Thread.setDefaultUncaughtExceptionHandler(previous);
    }
  }

  /** Every agent's gossip behind a {@link BlockingGossip}, collected by node name. */
  private static AgentCluster.Hooks blockableGossip(Map<String, BlockingGossip> byNode) {
    return new AgentCluster.Hooks(name -> MonotonicClock.system(), (name, g) -> {
      BlockingGossip wrapped = new BlockingGossip(g);
      byNode.put(name, wrapped);
      return wrapped;
    }, (name, d) -> d, (thread, error) -> { });
  }

  /** A device whose keepalive throws an Error once {@code broken} is set. */
  private record FailingKeepalive(RecordingWatchdogDevice real, AtomicBoolean broken) implements WatchdogDevice {
    @Override
    public Duration open(Duration requested) throws WatchdogException {
      return real.open(requested);
    }

    @Override
    public void keepalive() {
      if (broken.get()) {
        throw new OutOfMemoryError("test: feeder");
      }
      real.keepalive();
    }

    @Override
    public void magicClose() {
      real.magicClose();
    }

    @Override
    public void closeWithoutMagic() {
      real.closeWithoutMagic();
    }

    @Override
    public Optional<Duration> timeLeft() {
      return real.timeLeft();
    }

    @Override
    public boolean supportsIoctl() {
      return false;
    }

    @Override
    public boolean isOpen() {
      return real.isOpen();
    }

    @Override
    public Optional<Boolean> nowayout() {
      return real.nowayout();
    }

    @Override
    public String name() {
      return "failing-keepalive";
    }
  }
}
