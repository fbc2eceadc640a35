package dev.fencing.agent.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.proto.fencing.v1.Event;
import dev.fencing.proto.fencing.v1.EventType;
import dev.fencing.proto.fencing.v1.Node;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** The hub's member view, snapshots and overflow, without a transport. */
class EventHubTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  private static List<Event> drain(EventHub.Subscription s) {
    List<Event> events = new ArrayList<>();
    for (Event e = s.poll(); e != null; e = s.poll()) {
      events.add(e);
    }
    return events;
  }

  @Test
  void retainOnlyForgetsDepartedNodesOutsideTheExpectedSetAndKeepsMembers() {
    EventHub hub = new EventHub(16, InstantSource.fixed(T0));
    for (int i = 0; i < 50; i++) {
      hub.publish(EventType.JOIN, "old-" + i, Map.of(), T0, "gossip");
      hub.publish(EventType.LEFT, "old-" + i, Map.of(), T0, "config");
    }
    hub.publish(EventType.JOIN, "node-a", Map.of(), T0, "gossip");
    hub.publish(EventType.JOIN, "node-b", Map.of(), T0, "gossip");
    hub.publish(EventType.LEFT, "node-b", Map.of(), T0, "gossip");

    hub.retainOnly(java.util.Set.of("node-a", "node-b"));

    assertThat(hub.rememberedNodes()).isEqualTo(2);
    assertThat(hub.currentMembers()).extracting(Node::getName).containsExactly("node-a");
  }

  @Test
  void leftCarriesTheLastKnownAddressesAndLaterJoinCarriesTheDisconnectTime() {
    EventHub hub = new EventHub(16, InstantSource.fixed(T0));
    EventHub.Subscription sub = hub.subscribe(() -> {});
    hub.publish(EventType.JOIN, "node-a", Map.of("InternalIP", "198.18.0.1"), T0, "gossip");
    hub.publish(EventType.LEFT, "node-a", Map.of(), T0.plusSeconds(3), "gossip");
    hub.publish(EventType.JOIN, "node-a", Map.of("InternalIP", "198.18.0.9"), T0.plusSeconds(7), "gossip");

    List<Event> events = drain(sub);

    assertThat(events).extracting(Event::getType).containsExactly(EventType.JOIN, EventType.LEFT, EventType.JOIN);
    Node left = events.get(1).getNode();
    assertThat(left.getAddressesMap()).containsEntry("InternalIP", "198.18.0.1");
    assertThat(left.hasPrevDisconnectTime()).isFalse();
    Node rejoined = events.get(2).getNode();
    assertThat(rejoined.getAddressesMap()).containsEntry("InternalIP", "198.18.0.9");
    assertThat(rejoined.getPrevDisconnectTime().getSeconds()).isEqualTo(T0.plusSeconds(3).getEpochSecond());
    assertThat(hub.currentMembers()).containsExactly(rejoined);
  }

  @Test
  void eventWithoutTimeGetsTheClockTimeAndSnapshotJoinsTheSubscriptionTime() {
    EventHub hub = new EventHub(16, InstantSource.fixed(T0));
    hub.publish(EventType.JOIN, "node-a", Map.of(), null, null);

    Event snapshot = drain(hub.subscribe(() -> {})).get(0);

    assertThat(snapshot.getTime().getSeconds()).isEqualTo(T0.getEpochSecond());
    assertThat(snapshot.getSourceName()).isEqualTo(EventHub.SNAPSHOT_SOURCE);
  }

  @Test
  void invalidPublishIsRejectedWithAMessage() {
    EventHub hub = new EventHub(16, InstantSource.fixed(T0));

    assertThatThrownBy(() -> hub.publish(EventType.UNDEFINED, "node-a", Map.of(), T0, null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("JOIN or LEFT");
    assertThatThrownBy(() -> hub.publish(EventType.JOIN, " ", Map.of(), T0, null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nodeName");
    assertThatThrownBy(() -> new EventHub(0, InstantSource.fixed(T0)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("perSubscriberBuffer");
  }

  @Test
  void fullBufferDropsOnlyThatSubscriberAndCountsIt() {
    EventHub hub = new EventHub(4, InstantSource.fixed(T0));
    hub.publish(EventType.JOIN, "node-a", Map.of(), T0, "gossip");
    EventHub.Subscription slow = hub.subscribe(() -> {});
    EventHub.Subscription fast = hub.subscribe(() -> {});
    List<Event> fastEvents = new ArrayList<>(drain(fast));

    for (int i = 0; i < 10; i++) {
      hub.publish(EventType.JOIN, "node-" + i, Map.of(), T0, "gossip");
      fastEvents.addAll(drain(fast));
    }

    assertThat(slow.overflowed()).isTrue();
    assertThat(slow.poll()).isNull();
    assertThat(fast.overflowed()).isFalse();
    assertThat(fastEvents).hasSize(11);
    assertThat(hub.subscriberCount()).isEqualTo(1);
  }

  @Test
  void onAvailableIsCalledForSnapshotEventsAndOverflow() {
    EventHub hub = new EventHub(1, InstantSource.fixed(T0));
    AtomicInteger signals = new AtomicInteger();
    EventHub.Subscription sub = hub.subscribe(signals::incrementAndGet);
    hub.publish(EventType.JOIN, "node-a", Map.of(), T0, "gossip");
    hub.publish(EventType.JOIN, "node-b", Map.of(), T0, "gossip");

    assertThat(signals).hasValue(3);
    assertThat(sub.overflowed()).isTrue();
  }

  @Test
  void metricsUseTheAgreedPrometheusNames() {
    EventHub hub = new EventHub(1, InstantSource.fixed(T0));
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    hub.bindMetrics(registry);
    hub.subscribe(() -> {});
    hub.subscribe(() -> {});
    hub.publish(EventType.JOIN, "node-a", Map.of(), T0, "gossip");
    hub.publish(EventType.JOIN, "node-b", Map.of(), T0, "gossip");

    String scrape = registry.scrape();

    assertThat(scrape).contains("fencing_events_published_total 2.0")
        .contains("fencing_event_subscribers_dropped_total 2.0")
        .contains("fencing_event_subscribers 0.0");
  }

  /** Whatever the interleaving of publishes and subscriptions, snapshot + live events replay to the final view. */
  @Property(tries = 200)
  void snapshotPlusLiveEventsAlwaysReplayToTheFinalMembership(
      @ForAll long seed, @ForAll @IntRange(min = 1, max = 200) int operations) {
    Random random = new Random(seed);
    EventHub hub = new EventHub(1_000, InstantSource.fixed(T0));
    List<EventHub.Subscription> subs = new ArrayList<>();
    for (int i = 0; i < operations; i++) {
      int op = random.nextInt(10);
      String node = "node-" + random.nextInt(6);
      if (op == 0) {
        subs.add(hub.subscribe(() -> {}));
      } else if (op < 6) {
        hub.publish(EventType.JOIN, node, Map.of("ip", Integer.toString(i)), T0, "gossip");
      } else {
        hub.publish(EventType.LEFT, node, Map.of(), T0, "gossip");
      }
    }
    Map<String, Node> expected = new HashMap<>();
    hub.currentMembers().forEach(n -> expected.put(n.getName(), n));
    for (EventHub.Subscription sub : subs) {
      Map<String, Node> view = new HashMap<>();
      for (Event e : drain(sub)) {
        if (e.getType() == EventType.JOIN) {
          view.put(e.getNode().getName(), e.getNode());
        } else {
          view.remove(e.getNode().getName());
        }
      }
      assertThat(view).isEqualTo(expected);
    }
  }
}
