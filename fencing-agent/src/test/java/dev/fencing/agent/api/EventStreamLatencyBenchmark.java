package dev.fencing.agent.api;

import com.google.protobuf.Empty;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.Event;
import dev.fencing.proto.fencing.v1.EventType;
import dev.fencing.proto.fencing.v1.FencingGrpc;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Latency from {@link EventHub#publish} to a StreamEvents client over a real Unix socket: closed loop (one event in
 * flight, pure latency) and open loop (a burst, latency under load and throughput). Prints figures; never fails on
 * timing. Run:
 *
 * <pre>
 * ./mvnw -o -q -pl fencing-agent test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=dev.fencing.agent.api.EventStreamLatencyBenchmark [-Dexec.args=10000]
 * </pre>
 */
public final class EventStreamLatencyBenchmark {

  private static final String SEQ = "seq";

  private EventStreamLatencyBenchmark() {}

  public static void main(String[] args) throws Exception {
    int events = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    Path dir = Files.createTempDirectory("fab");
    Path socket = dir.resolve("agent.sock");
    EventHub hub = new EventHub(events + 1_000, InstantSource.system());
    long[] sent = new long[events];
    long[] received = new long[events];
    Semaphore arrivals = new Semaphore(0);
    AtomicBoolean finished = new AtomicBoolean();
    LocalApiServer server = new LocalApiServer(socket, hub, AgentStatus::getDefaultInstance);
    server.start();
    ManagedChannel channel = LocalApiChannel.open(socket);
    try {
      long[] current = received;
      FencingGrpc.newStub(channel).streamEvents(Empty.getDefaultInstance(), new StreamObserver<>() {
        @Override
        public void onNext(Event e) {
          long now = System.nanoTime();
          String seq = e.getNode().getAddressesMap().get(SEQ);
          if (seq != null) {
            current[Integer.parseInt(seq)] = now;
            arrivals.release();
          }
        }

        @Override
        public void onError(Throwable t) {
          if (!finished.get()) {
            System.err.println("stream failed: " + t);
          }
        }

        @Override
        public void onCompleted() {}
      });
      while (hub.subscriberCount() == 0) {
        Thread.onSpinWait();
      }

      // Warm-up: same path, results discarded (JIT, connection, buffers).
      runClosedLoop(hub, sent, arrivals, Math.min(events, 5_000));
      Arrays.fill(received, 0);

      long start = System.nanoTime();
      runClosedLoop(hub, sent, arrivals, events);
      long closedElapsed = System.nanoTime() - start;
      report("closed loop (1 in flight)", sent, received, events, closedElapsed);

      Arrays.fill(received, 0);
      start = System.nanoTime();
      for (int i = 0; i < events; i++) {
        sent[i] = System.nanoTime();
        hub.publish(i % 2 == 0 ? EventType.JOIN : EventType.LEFT, "bench-" + (i % 32), Map.of(SEQ, Integer.toString(i)),
            null, "bench");
      }
      if (!arrivals.tryAcquire(events, 60, TimeUnit.SECONDS)) {
        System.err.println("burst: not every event arrived within 60 s");
      }
      long burstElapsed = System.nanoTime() - start;
      report("open loop (burst of " + events + ")", sent, received, events, burstElapsed);
    } finally {
      finished.set(true);
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      server.close();
      Files.deleteIfExists(dir);
    }
  }

  private static void runClosedLoop(EventHub hub, long[] sent, Semaphore arrivals, int n) throws InterruptedException {
    for (int i = 0; i < n; i++) {
      sent[i] = System.nanoTime();
      hub.publish(i % 2 == 0 ? EventType.JOIN : EventType.LEFT, "bench-" + (i % 32), Map.of(SEQ, Integer.toString(i)),
          null, "bench");
      if (!arrivals.tryAcquire(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("event " + i + " did not arrive within 10 s");
      }
    }
  }

  private static void report(String name, long[] sent, long[] received, int n, long elapsedNanos) {
    long[] micros = new long[n];
    int count = 0;
    for (int i = 0; i < n; i++) {
      if (received[i] != 0) {
        micros[count++] = (received[i] - sent[i]) / 1_000;
      }
    }
    long[] sorted = Arrays.copyOf(micros, count);
    Arrays.sort(sorted);
    System.out.printf(Locale.ROOT,
        "%-32s events=%d p50=%dus p90=%dus p99=%dus max=%dus throughput=%.0f events/s%n",
        name, count, pct(sorted, 50), pct(sorted, 90), pct(sorted, 99), sorted.length == 0 ? 0 : sorted[count - 1],
        count / (elapsedNanos / 1e9));
  }

  private static long pct(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }
}
