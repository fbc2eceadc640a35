package dev.fencing.agent.api;

import com.google.protobuf.Empty;
import dev.fencing.proto.fencing.v1.Event;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;

/** A StreamEvents client for tests: records events, counts arrivals, and completes with the stream's end status. */
final class RecordingObserver implements ClientResponseObserver<Empty, Event> {

  final List<Event> events = new CopyOnWriteArrayList<>();
  final Semaphore arrivals = new Semaphore(0);
  final CompletableFuture<Status> end = new CompletableFuture<>();
  private final boolean reads;
  private volatile ClientCallStreamObserver<Empty> call;

  /** @param reads false for a consumer that requests nothing until {@link #startReading()} */
  RecordingObserver(boolean reads) {
    this.reads = reads;
  }

  /** Lets a non-reading consumer take everything the server has for it. */
  void startReading() {
    call.request(Integer.MAX_VALUE);
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<Empty> requestStream) {
    call = requestStream;
    if (!reads) {
      requestStream.disableAutoRequestWithInitial(0);
    }
  }

  @Override
  public void onNext(Event e) {
    events.add(e);
    arrivals.release();
  }

  @Override
  public void onError(Throwable t) {
    end.complete(Status.fromThrowable(t));
  }

  @Override
  public void onCompleted() {
    end.complete(Status.OK);
  }
}
