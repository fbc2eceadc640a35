package dev.fencing.agent.api;

import com.google.protobuf.Timestamp;
import dev.fencing.proto.fencing.v1.Event;
import dev.fencing.proto.fencing.v1.EventType;
import dev.fencing.proto.fencing.v1.Node;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's membership view and the fan-out of its changes to local API subscribers.
 *
 * <p>Membership decides, the hub only records and distributes: {@link #publish} applies a JOIN (add or update) or
 * LEFT (remove, remembering the time as the node's {@code prevDisconnectTime}) to the current member view and offers
 * the resulting {@link Event} to every subscriber, all under one short lock so every subscriber sees the same order.
 *
 * <p><b>No gap between snapshot and live events.</b> {@link #subscribe} takes the member snapshot and registers the
 * subscriber under that same lock: a change published before it is in the snapshot, a change published after it is
 * in the subscriber's queue, none is in both or neither. The queue therefore starts with one JOIN per current member
 * (sourceName {@value #SNAPSHOT_SOURCE}).
 *
 * <p><b>Slow consumers.</b> Every subscriber has a bounded queue ({@code perSubscriberBuffer} live events on top of
 * its snapshot). {@link #publish} only ever offers: when a queue is full that subscriber is marked overflowed and
 * removed, so it is told to resynchronise (the gRPC stream ends with RESOURCE_EXHAUSTED) while the publisher and
 * every other subscriber continue at full speed.
 */
public final class EventHub {

  /** sourceName of the JOIN events a subscription opens with. */
  public static final String SNAPSHOT_SOURCE = "snapshot";

  private static final Logger LOG = LoggerFactory.getLogger(EventHub.class);

  private final int perSubscriberBuffer;
  private final InstantSource clock;
  private final Object lock = new Object();
  // Guarded by lock. Insertion order = order of first JOIN, which keeps GetAll output stable.
  private final Map<String, Node> members = new LinkedHashMap<>();
  // Guarded by lock. Last known addresses and prevDisconnectTime of every node ever seen (bounded by group size).
  private final Map<String, Node> known = new LinkedHashMap<>();
  private final Set<Subscription> subscribers = new CopyOnWriteArraySet<>();
  private final AtomicLong published = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();

  /**
   * @param perSubscriberBuffer live events a subscriber may lag behind before it is dropped (at least 1)
   * @param clock wall clock used for snapshot event times and for events published without a time
   */
  public EventHub(int perSubscriberBuffer, InstantSource clock) {
    if (perSubscriberBuffer < 1) {
      throw new IllegalArgumentException("perSubscriberBuffer must be at least 1, got " + perSubscriberBuffer);
    }
    this.perSubscriberBuffer = perSubscriberBuffer;
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * Records a membership change and offers it to every subscriber. Never blocks on a subscriber.
   *
   * @param type JOIN (node added or its addresses updated) or LEFT (node removed)
   * @param nodeName member name, not blank
   * @param addresses the node's addresses per network; for LEFT an empty map means "the last known addresses"
   * @param time when the change was decided; null means now on the hub's clock
   * @param sourceName what decided it ("gossip", "isolated"); null for none
   */
  public void publish(
      EventType type, String nodeName, Map<String, String> addresses, Instant time, String sourceName) {
    if (type != EventType.JOIN && type != EventType.LEFT) {
      throw new IllegalArgumentException("event type must be JOIN or LEFT, got " + type);
    }
    if (nodeName == null || nodeName.isBlank()) {
      throw new IllegalArgumentException("nodeName must not be blank");
    }
    Map<String, String> addr = addresses == null ? Map.of() : addresses;
    Timestamp when = toTimestamp(time == null ? clock.instant() : time);
    synchronized (lock) {
      Node previous = known.get(nodeName);
      Node.Builder node = Node.newBuilder().setName(nodeName);
      if (previous != null && previous.hasPrevDisconnectTime()) {
        node.setPrevDisconnectTime(previous.getPrevDisconnectTime());
      }
      if (type == EventType.LEFT && addr.isEmpty() && previous != null) {
        node.putAllAddresses(previous.getAddressesMap());
      } else {
        node.putAllAddresses(addr);
      }
      // The LEFT event itself carries the disconnect before this one; later messages carry this one.
      Node eventNode = node.build();
      if (type == EventType.JOIN) {
        members.put(nodeName, eventNode);
        known.put(nodeName, eventNode);
      } else {
        members.remove(nodeName);
        known.put(nodeName, eventNode.toBuilder().setPrevDisconnectTime(when).build());
      }
      Event.Builder event = Event.newBuilder().setNode(eventNode).setTime(when).setType(type);
      if (sourceName != null) {
        event.setSourceName(sourceName);
      }
      Event built = event.build();
      published.incrementAndGet();
      for (Subscription s : subscribers) {
        s.offer(built);
      }
    }
  }

  /**
   * Forgets every node outside {@code names} that is not a current member (its last addresses and disconnect time),
   * so what the hub remembers stays bounded by the expected set when the group changes. Publishes nothing.
   */
  public void retainOnly(Set<String> names) {
    synchronized (lock) {
      known.keySet().removeIf(name -> !names.contains(name) && !members.containsKey(name));
    }
  }

  /** Number of nodes the hub remembers (current members and the last state of departed ones), for tests. */
  int rememberedNodes() {
    synchronized (lock) {
      return known.size();
    }
  }

  /** The current members in order of first JOIN, as served by GetAll. */
  public List<Node> currentMembers() {
    synchronized (lock) {
      return List.copyOf(members.values());
    }
  }

  /**
   * Registers a subscriber whose queue starts with the current members as JOIN events.
   *
   * @param onAvailable called (on the publisher's thread, so it must not block) after an event was queued or the
   *     subscription overflowed; typically schedules a drain
   */
  public Subscription subscribe(Runnable onAvailable) {
    Objects.requireNonNull(onAvailable, "onAvailable");
    Subscription sub;
    synchronized (lock) {
      Timestamp now = toTimestamp(clock.instant());
      sub = new Subscription(members.size() + perSubscriberBuffer, onAvailable);
      for (Node n : members.values()) {
        sub.queue.add(
            Event.newBuilder()
                .setNode(n)
                .setTime(now)
                .setType(EventType.JOIN)
                .setSourceName(SNAPSHOT_SOURCE)
                .build());
      }
      subscribers.add(sub);
    }
    sub.onAvailable.run();
    return sub;
  }

  /** Number of live subscriptions. */
  public int subscriberCount() {
    return subscribers.size();
  }

  /**
   * Registers {@code fencing_event_subscribers}, {@code fencing_events_published_total} and {@code
   * fencing_event_subscribers_dropped_total} (Prometheus names) on the registry.
   */
  public void bindMetrics(MeterRegistry registry) {
    Gauge.builder("fencing.event.subscribers", subscribers, Set::size)
        .description("Local API StreamEvents subscribers currently connected")
        .register(registry);
    FunctionCounter.builder("fencing.events.published", published, AtomicLong::get)
        .description("Membership events published to the local API")
        .register(registry);
    FunctionCounter.builder("fencing.event.subscribers.dropped", dropped, AtomicLong::get)
        .description("StreamEvents subscribers ended with RESOURCE_EXHAUSTED because they fell behind")
        .register(registry);
  }

  private static Timestamp toTimestamp(Instant t) {
    return Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()).build();
  }

  /** One subscriber's bounded queue: the snapshot JOINs first, then live events in publish order. */
  public final class Subscription implements AutoCloseable {
    private final ArrayBlockingQueue<Event> queue;
    private final Runnable onAvailable;
    private volatile boolean overflowed;

    private Subscription(int capacity, Runnable onAvailable) {
      this.queue = new ArrayBlockingQueue<>(capacity);
      this.onAvailable = onAvailable;
    }

    /** The next queued event, or null if none is queued right now. */
    public Event poll() {
      return queue.poll();
    }

    /** True once the queue overflowed; the subscription is then already removed from the hub. */
    public boolean overflowed() {
      return overflowed;
    }

    /** Unsubscribes; idempotent. */
    @Override
    public void close() {
      subscribers.remove(this);
    }

    // Called under the hub lock.
    private void offer(Event e) {
      if (!queue.offer(e)) {
        overflowed = true;
        queue.clear();
        subscribers.remove(this);
        dropped.incrementAndGet();
        LOG.warn("event=subscriber_dropped reason=buffer_full buffer={}", perSubscriberBuffer);
      }
      onAvailable.run();
    }
  }
}
