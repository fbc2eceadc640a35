package dev.fencing.agent.membership;

import dev.fencing.proto.fencing.v1.EventType;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns gossip member changes into the local API's JOIN / LEFT events: JOIN when a member is alive and not isolated
 * (and again when its addresses change), LEFT when it is dead or left (Lifeguard suspicion decides) or announces
 * itself isolated. Publishes only on change, in the order the gossip layer reported. Thread-safe.
 */
public final class MembershipView {

  /** sourceName of events decided by gossip liveness. */
  public static final String SOURCE_GOSSIP = "gossip";
  /** sourceName of events decided by a member's isolated flag (quorumLossAction Exclude). */
  public static final String SOURCE_ISOLATED = "isolated";

  private static final Logger LOG = LoggerFactory.getLogger(MembershipView.class);

  private final String self;
  private final MembershipSink sink;
  private final InstantSource clock;
  private final String logContext;
  private final Map<String, GossipMember> latest = new HashMap<>();
  private final Map<String, NodeMeta> visible = new HashMap<>();
  private final java.util.Set<String> hiddenByIsolation = new java.util.HashSet<>();

  /**
   * @param self this node's name (its own isolation never hides it from its own consumers)
   * @param sink where events go
   * @param clock wall clock for event times
   * @param logContext {@code node=… group=…}
   */
  public MembershipView(String self, MembershipSink sink, InstantSource clock, String logContext) {
    this.self = self;
    this.sink = sink;
    this.clock = clock;
    this.logContext = logContext;
  }

  /** Applies one change reported by gossip. */
  public synchronized void apply(GossipMember member) {
    latest.put(member.name(), member);
    boolean alive = member.state() == GossipState.ALIVE || member.state() == GossipState.SUSPECT;
    boolean isolated = member.meta().isolated() && !member.name().equals(self);
    NodeMeta shown = visible.get(member.name());
    if (alive && !isolated) {
      if (shown == null || !shown.addresses().equals(member.meta().addresses())) {
        String source = shown == null && hiddenByIsolation.contains(member.name()) ? SOURCE_ISOLATED : SOURCE_GOSSIP;
        visible.put(member.name(), member.meta());
        LOG.info("{} event=member_join peer={} source={} addresses={}", logContext, member.name(), source,
            member.meta().addresses());
        sink.publish(EventType.JOIN, member.name(), member.meta().addresses(), clock.instant(), source);
      }
      hiddenByIsolation.remove(member.name());
      return;
    }
    if (alive) {
      hiddenByIsolation.add(member.name());
    } else {
      hiddenByIsolation.remove(member.name());
    }
    if (shown != null) {
      visible.remove(member.name());
      String source = alive ? SOURCE_ISOLATED : SOURCE_GOSSIP;
      LOG.info("{} event=member_left peer={} source={} state={}", logContext, member.name(), source,
          member.state().name().toLowerCase(java.util.Locale.ROOT));
      sink.publish(EventType.LEFT, member.name(), shown.addresses(), clock.instant(), source);
    }
  }

  /** The gossip state of {@code name}, if gossip ever reported it. */
  public synchronized Optional<GossipMember> member(String name) {
    return Optional.ofNullable(latest.get(name));
  }

  /** Number of known members per gossip state, for metrics. */
  public synchronized Map<GossipState, Integer> countByState() {
    Map<GossipState, Integer> counts = new HashMap<>();
    for (GossipState state : GossipState.values()) {
      counts.put(state, 0);
    }
    for (GossipMember m : latest.values()) {
      counts.merge(m.state(), 1, Integer::sum);
    }
    return counts;
  }
}
