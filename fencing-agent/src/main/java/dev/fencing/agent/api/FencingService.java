package dev.fencing.agent.api;

import com.google.protobuf.Empty;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.AllNodes;
import dev.fencing.proto.fencing.v1.Event;
import dev.fencing.proto.fencing.v1.FencingGrpc;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** fencing.v1.Fencing backed by an {@link EventHub} and a status supplier. */
final class FencingService extends FencingGrpc.FencingImplBase {

  private static final Logger LOG = LoggerFactory.getLogger(FencingService.class);

  private final EventHub hub;
  private final Supplier<AgentStatus> status;
  private final Executor drainExecutor;
  private final Set<EventStream> streams = ConcurrentHashMap.newKeySet();

  FencingService(EventHub hub, Supplier<AgentStatus> status, Executor drainExecutor) {
    this.hub = hub;
    this.status = status;
    this.drainExecutor = drainExecutor;
  }

  @Override
  public void getAll(Empty request, StreamObserver<AllNodes> response) {
    response.onNext(AllNodes.newBuilder().addAllNodes(hub.currentMembers()).build());
    response.onCompleted();
  }

  @Override
  public void getStatus(Empty request, StreamObserver<AgentStatus> response) {
    AgentStatus s;
    try {
      s = status.get();
    } catch (RuntimeException e) {
      LOG.warn("event=status_failed error={}", String.valueOf(e));
      response.onError(Status.INTERNAL.withDescription("agent status failed: " + e).asRuntimeException());
      return;
    }
    if (s == null) {
      response.onError(Status.FAILED_PRECONDITION.withDescription("the agent is starting: no status yet")
          .asRuntimeException());
      return;
    }
    response.onNext(s);
    response.onCompleted();
  }

  @Override
  public void streamEvents(Empty request, StreamObserver<Event> response) {
    EventStream stream = new EventStream((ServerCallStreamObserver<Event>) response);
    streams.add(stream);
    stream.start();
  }

  /** Ends every open stream with UNAVAILABLE so consumers reconnect to the next agent instance. */
  void endAllStreams() {
    for (EventStream s : streams) {
      s.end(Status.UNAVAILABLE.withDescription("fencing agent is shutting down"));
    }
  }

  /**
   * Moves events from one hub subscription to one gRPC stream, honouring the transport's flow control (isReady).
   * At most one thread drains at a time (work-in-progress counter), whoever triggers it: the hub on publish or gRPC
   * when the stream becomes ready again.
   */
  private final class EventStream {
    private final ServerCallStreamObserver<Event> observer;
    private final AtomicInteger wip = new AtomicInteger();
    private volatile EventHub.Subscription subscription;
    // Written only by the draining thread or under the wip protocol; volatile for end() from other threads.
    private volatile Status endStatus;
    private volatile boolean finished;

    EventStream(ServerCallStreamObserver<Event> observer) {
      this.observer = observer;
    }

    void start() {
      observer.setOnCancelHandler(this::cancelled);
      observer.setOnReadyHandler(this::signal);
      subscription = hub.subscribe(this::signal);
    }

    void end(Status status) {
      endStatus = status;
      signal();
    }

    private void cancelled() {
      finished = true;
      release();
    }

    private void release() {
      streams.remove(this);
      if (subscription != null) {
        subscription.close();
      }
    }

    private void signal() {
      if (wip.getAndIncrement() == 0) {
        try {
          drainExecutor.execute(this::drainLoop);
        } catch (RejectedExecutionException e) {
          // The server is stopping; its shutdown cancels this call.
          wip.set(0);
        }
      }
    }

    private void drainLoop() {
      int missed = 1;
      do {
        try {
          drainOnce();
        } catch (RuntimeException e) {
          // onNext after a concurrent cancel throws; the stream is gone either way.
          LOG.debug("event=stream_drain_failed error={}", String.valueOf(e));
          finished = true;
          release();
        }
        missed = wip.addAndGet(-missed);
      } while (missed != 0);
    }

    private void drainOnce() {
      if (finished || subscription == null || observer.isCancelled()) {
        return;
      }
      if (subscription.overflowed()) {
        finish(Status.RESOURCE_EXHAUSTED.withDescription(
            "event stream consumer fell behind and was dropped; call GetAll or StreamEvents again to resync"));
        return;
      }
      Status end = endStatus;
      if (end != null) {
        finish(end);
        return;
      }
      while (observer.isReady()) {
        Event e = subscription.poll();
        if (e == null) {
          return;
        }
        observer.onNext(e);
      }
    }

    private void finish(Status status) {
      finished = true;
      release();
      observer.onError(status.asRuntimeException());
    }
  }
}
