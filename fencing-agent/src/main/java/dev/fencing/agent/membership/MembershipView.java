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
 *
 * <p>Only {@link ExpectedPeers expected} members at their configured addresses are published or remembered, so
 * consumers never see a stranger and the view is bounded by the group size. When the expected set changes, a member
 * that is no longer expected gets a LEFT (source {@value #SOURCE_CONFIG}); one newly expected appears with its next
 * gossip report.
 */
public final class MembershipView {

  /** sourceName of events decided by gossip liveness. */
  public static final String SOURCE_GOSSIP = "gossip";
  /** sourceName of events decided by a member's isolated flag (quorumLossAction Exclude). */
  public static final String SOURCE_ISOLATED = "isolated";
  /** sourceName of LEFT events for members removed from the expected set. */
  public static final String SOURCE_CONFIG = "config";

  private static final Logger LOG = LoggerFactory.getLogger(MembershipView.class);

  private final String self;
  private final MembershipSink sink;
  private final InstantSource clock;
  private final String logContext;
  private final Map<String, GossipMember> latest = new HashMap<>();
  private final Map<String, NodeMeta> visible = new HashMap<>();
  private final java.util.Set<String> hiddenByIsolation = new java.util.HashSet<>();
  // Carried over from the view of a gossip member this one replaced and not reported by the new one yet.
  private final java.util.Set<String> unconfirmed = new java.util.HashSet<>();
  private long unconfirmedUntilNanos;
  private boolean retired;
  private ExpectedPeers expected;
  private long changes;

  /**
   * @param self this node's name (its own isolation never hides it from its own consumers)
   * @param sink where events go
   * @param clock wall clock for event times
   * @param logContext {@code node=… group=…}
   * @param expected the members that may be published
   */
  public MembershipView(String self, MembershipSink sink, InstantSource clock, String logContext,
      ExpectedPeers expected) {
    this.self = self;
    this.sink = sink;
    this.clock = clock;
    this.logContext = logContext;
    this.expected = expected;
  }

  /**
   * Replaces the expected set: every member no longer expected (or now expected at another address) is forgotten,
   * with a LEFT if consumers saw it. Members newly expected appear when gossip reports them ({@link #apply}).
   */
  public synchronized void expect(ExpectedPeers peers) {
    expected = peers;
    for (String name : java.util.List.copyOf(latest.keySet())) {
      GossipMember m = latest.get(name);
      if (peers.admits(name, m.hostPort())) {
        continue;
      }
      latest.remove(name);
      changes++;
      hiddenByIsolation.remove(name);
      NodeMeta shown = visible.remove(name);
      if (shown != null) {
        LOG.info("{} event=member_left peer={} source={} reason=not_expected", logContext, name, SOURCE_CONFIG);
        sink.publish(EventType.LEFT, name, shown.addresses(), clock.instant(), SOURCE_CONFIG);
      }
    }
  }

  /**
   * Takes over what consumers see from {@code previous}, the view of the gossip member this view's member replaces
   * (a gossip restart: another group or label, another address, encryption switched), and retires it: the old member's
   * last words (its own leave, deaths seen while it stops) no longer reach consumers. Without this the consumers kept
   * every member the old view had shown (nothing withdrew them from the hub), and saw LEFT for their own node. A
   * member the new expected set no longer admits gets a LEFT now (source config); the others stay shown without an
   * event and must be reported by the new member before {@code deadlineNanos} ({@link #expireUnconfirmed}).
   */
  public void carryOver(MembershipView previous, long deadlineNanos) {
    Map<String, NodeMeta> shown;
    Map<String, GossipMember> last;
    synchronized (previous) {
      previous.retired = true;
      shown = new HashMap<>(previous.visible);
      last = new HashMap<>(previous.latest);
    }
    synchronized (this) {
      unconfirmedUntilNanos = deadlineNanos;
      shown.forEach((name, meta) -> {
        GossipMember m = last.get(name);
        if (m != null && expected.admits(name, m.hostPort())) {
          visible.put(name, meta);
          unconfirmed.add(name);
        } else {
          LOG.info("{} event=member_left peer={} source={} reason=not_expected", logContext, name, SOURCE_CONFIG);
          sink.publish(EventType.LEFT, name, meta.addresses(), clock.instant(), SOURCE_CONFIG);
        }
      });
    }
  }

  /**
   * After a gossip restart: members carried over ({@link #carryOver}) that the new gossip member has not reported by
   * the deadline get a LEFT (source gossip): it cannot reach them (dead, or no longer sharing its group or label).
   */
  public synchronized void expireUnconfirmed(long nowNanos) {
    if (unconfirmed.isEmpty() || nowNanos - unconfirmedUntilNanos < 0) {
      return;
    }
    for (String name : java.util.List.copyOf(unconfirmed)) {
      NodeMeta shown = visible.remove(name);
      if (shown != null) {
        LOG.info("{} event=member_left peer={} source={} reason=not_heard_after_gossip_restart", logContext, name,
            SOURCE_GOSSIP);
        sink.publish(EventType.LEFT, name, shown.addresses(), clock.instant(), SOURCE_GOSSIP);
      }
    }
    unconfirmed.clear();
  }

  /**
   * Applies one change reported by gossip.
   *
   * @return false when the member was dropped: not expected, or not at its configured address (or this view was
   *     retired by a gossip restart)
   */
  public synchronized boolean apply(GossipMember member) {
    if (retired || !expected.admits(member.name(), member.hostPort())) {
      return false;
    }
    unconfirmed.remove(member.name());
    latest.put(member.name(), member);
    changes++;
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
      return true;
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
    return true;
  }

  /** The gossip state of {@code name}, if gossip ever reported it. */
  public synchronized Optional<GossipMember> member(String name) {
    return Optional.ofNullable(latest.get(name));
  }

  /**
   * Counts changes to what {@link #member} returns: a reader that read this count before its lookups may keep what it
   * built from them until the count moves.
   */
  public synchronized long changes() {
    return changes;
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
