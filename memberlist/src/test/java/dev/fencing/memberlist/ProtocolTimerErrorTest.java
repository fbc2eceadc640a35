package dev.fencing.memberlist;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An {@link Error} thrown inside a protocol timer task (here: the gossip tick calling the delegate) reaches the
 * protocol thread's uncaught-exception handler, where the agent ends the process; it must not vanish inside the
 * scheduled future as it would on a plain {@code ScheduledThreadPoolExecutor}.
 */
class ProtocolTimerErrorTest {

  private final List<Memberlist> started = new ArrayList<>();
  private Thread.UncaughtExceptionHandler previous;

  @AfterEach
  void stop() {
    started.forEach(Memberlist::shutdown);
    Thread.setDefaultUncaughtExceptionHandler(previous);
  }

  @Test
  void anErrorInAProtocolTimerReachesTheUncaughtExceptionHandler() throws Exception {
    AtomicReference<Throwable> seen = new AtomicReference<>();
    previous = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
      if (t.getName().startsWith("memberlist-protocol-")) {
        seen.compareAndSet(null, e);
      }
    });
    AtomicBoolean armed = new AtomicBoolean(true);
    Delegate exploding = new Delegate() {
      @Override
      public List<byte[]> getBroadcasts(int overhead, int limit) {
        // only on the protocol timer thread: the receive thread also piggybacks broadcasts, and has its own test
        if (Thread.currentThread().getName().startsWith("memberlist-protocol-") && armed.getAndSet(false)) {
          throw new StackOverflowError("injected");
        }
        return List.of();
      }
    };
    Memberlist a = start("a", exploding);
    Memberlist b = start("b", new Delegate() {});
    b.join(List.of(a.localNode().hostPort()));
    // Awaitility would install its own default handler and catch the Error itself
    Awaitility.await("Error reported").dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(10))
        .until(() -> seen.get() != null);
    assertThat(seen.get()).isInstanceOf(StackOverflowError.class).hasMessage("injected");
  }

  private Memberlist start(String name, Delegate delegate) throws Exception {
    Config c = Config.defaultLocal().toBuilder().name(name).bindAddr("127.0.0.1").bindPort(0).delegate(delegate)
        .build();
    Memberlist m = Memberlist.create(c);
    started.add(m);
    return m;
  }
}
