package dev.fencing.e2e.agent;

import com.google.protobuf.Empty;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.Event;
import dev.fencing.proto.fencing.v1.FencingGrpc;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A local consumer of one agent's {@code fencing.v1} API, as Cilium would be: it subscribes to
 * {@code StreamEvents} over the agent's Unix socket and records every event with its receive time. When the stream
 * ends (agent reset or restarted, RESOURCE_EXHAUSTED) it resubscribes every half second, a bounded number of times.
 * The socket is a file, so this works from the host for an agent inside a network namespace.
 */
public final class FencingConsumer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(FencingConsumer.class);
    private static final long RESUBSCRIBE_MILLIS = 500;
    /** Half a second apart: a consumer keeps trying for an hour at most. */
    private static final int MAX_SUBSCRIPTIONS = 7200;

    private final String node;
    private final EventLoopGroup group;
    private final ManagedChannel channel;
    private final ScheduledExecutorService scheduler;
    private final Object lock = new Object();
    private final List<ConsumedEvent> events = new ArrayList<>();
    private int subscriptions;
    private boolean closed;

    private FencingConsumer(String node, Path socket) {
        this.node = node;
        this.group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        this.channel = NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollDomainSocketChannel.class)
                .eventLoopGroup(group)
                .usePlaintext()
                .build();
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "consumer-" + node);
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Starts consuming the agent of {@code node} at {@code socket} (which may not exist yet). */
    public static FencingConsumer start(String node, Path socket) {
        FencingConsumer consumer = new FencingConsumer(node, socket);
        consumer.scheduler.execute(consumer::subscribe);
        return consumer;
    }

    private void subscribe() {
        int subscription;
        synchronized (lock) {
            if (closed || subscriptions >= MAX_SUBSCRIPTIONS) {
                return;
            }
            subscription = ++subscriptions;
        }
        FencingGrpc.newStub(channel).streamEvents(Empty.getDefaultInstance(), new StreamObserver<>() {
            @Override
            public void onNext(Event event) {
                record(event, subscription);
            }

            @Override
            public void onError(Throwable error) {
                LOG.debug("event=stream-ended consumer={} subscription={} reason=\"{}\"", node, subscription,
                        error.getMessage());
                resubscribeLater();
            }

            @Override
            public void onCompleted() {
                resubscribeLater();
            }
        });
    }

    private void resubscribeLater() {
        synchronized (lock) {
            if (closed) {
                return;
            }
        }
        scheduler.schedule(this::subscribe, RESUBSCRIBE_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void record(Event event, int subscription) {
        ConsumedEvent consumed = new ConsumedEvent(System.currentTimeMillis(), System.nanoTime(),
                event.getNode().getName(), event.getType(), event.getSourceName(), subscription);
        synchronized (lock) {
            events.add(consumed);
            lock.notifyAll();
        }
        if (!"snapshot".equals(consumed.source())) {
            LOG.debug("event=consumer-received consumer={} member={} type={} source={}", node, consumed.node(),
                    consumed.type(), consumed.source());
        }
    }

    /** @return the node whose agent this consumer reads */
    public String node() {
        return node;
    }

    /** @return every event received so far */
    public List<ConsumedEvent> events() {
        synchronized (lock) {
            return List.copyOf(events);
        }
    }

    /** @return the first event received after {@code sinceNanos} matching {@code filter} */
    public Optional<ConsumedEvent> first(long sinceNanos, Predicate<ConsumedEvent> filter) {
        synchronized (lock) {
            return events.stream().filter(e -> e.receivedNanos() >= sinceNanos && filter.test(e)).findFirst();
        }
    }

    /**
     * Waits for an event received after {@code sinceNanos} matching {@code filter}.
     *
     * @throws IllegalStateException on timeout, naming the consumer and what it waited for
     */
    public ConsumedEvent await(String what, long sinceNanos, Predicate<ConsumedEvent> filter, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            while (true) {
                for (ConsumedEvent e : events) {
                    if (e.receivedNanos() >= sinceNanos && filter.test(e)) {
                        return e;
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("consumer of " + node + ": no " + what + " within " + timeout);
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted waiting for " + what, e);
                }
            }
        }
    }

    /**
     * @return the agent's status, or empty when the agent does not answer within two seconds (reset, stalled)
     */
    public Optional<AgentStatus> status() {
        try {
            return Optional.of(FencingGrpc.newBlockingStub(channel).withDeadlineAfter(2, TimeUnit.SECONDS)
                    .getStatus(Empty.getDefaultInstance()));
        } catch (StatusRuntimeException e) {
            return Optional.empty();
        }
    }

    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
        }
        scheduler.shutdownNow();
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
