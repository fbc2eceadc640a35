package dev.fencing.agent.watchdog;

import dev.fencing.agent.quorum.QuorumVerdict;
import dev.fencing.policy.Mode;
import dev.fencing.policy.QuorumLossAction;
import dev.fencing.proto.fencing.v1.DisarmReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The arming rules (ARCHITECTURE §5), driven once per evaluation tick by the agent's quorum thread with this node's
 * monotonic time. No threads or clock of its own. It never feeds itself: while feeding it publishes a "feed until"
 * deadline to the {@link WatchdogFeeder}, whose own thread does the keepalives; open and close go through the
 * feeder's device lock too.
 *
 * <ul>
 *   <li>Arms only in mode Watchdog, with a known config, outside maintenance, not being removed, without a disable
 *       file, with a usable device (nowayout refused), and after quorum has been held continuously for the arming
 *       delay: a node that boots into a minority never arms.
 *   <li>Feeds every feed interval. With {@code Fence} only while quorum holds: the deadline is the verdict's
 *       {@code heldUntil}, and once quorum is lost the node stops feeding for good ({@code fencingInProgress}) and
 *       the device resets it. {@code Exclude} and {@code Wait} never stop feeding for quorum loss; their deadline is
 *       one (stretched) quorum window after the tick, so a stuck quorum loop stops the feed under every action.
 *   <li>Disarms (magic close) when a disarm signal appears. While fencing is in progress, or while quorum is lost
 *       under Fence, a local disarm signal is refused: the majority may already count on this node's reset, and a
 *       node it cannot hear must not decide on its own that it will survive.
 *   <li>On shutdown: feeding ⇒ magic close; starving ⇒ close without the magic character so the fence completes.
 * </ul>
 */
public final class WatchdogSupervisor {

  private static final Logger LOG = LoggerFactory.getLogger(WatchdogSupervisor.class);

  private enum State { DISARMED, FEEDING, FENCING, SHUT_DOWN }

  private final WatchdogFeeder feeder;
  private final WatchdogDevice device;
  private final long reopenBackoffNanos;
  private final String logContext;

  private State state = State.DISARMED;
  private boolean heldSinceKnown;
  private long heldSinceNanos;
  private boolean shutDownWhileFencing;
  private long nextOpenAttemptNanos;
  private boolean openAttemptBlocked;
  private String condition = "not opened";
  private Optional<Duration> deviceTimeout = Optional.empty();
  // The timeout the device was armed with as requested (the policy's); deviceTimeout is what it read back.
  private Duration armedTimeout;
  private Optional<String> unavailable = Optional.empty();
  // The unavailability came from presenceProblem(), not from a failed open: a present device clears it.
  private boolean unavailableFromProbe;
  private long nextPresenceCheckNanos;
  private boolean presenceChecked;
  private boolean refusalLogged;
  private WatchdogStatus status;

  /**
   * @param feeder feeds the device from its own thread; every device operation goes through it
   * @param reopenBackoff how long to wait after a failed open before trying again (never a tight loop)
   * @param logContext {@code node=… group=…} prefix for every log line
   */
  public WatchdogSupervisor(WatchdogFeeder feeder, Duration reopenBackoff, String logContext) {
    this.feeder = feeder;
    this.device = feeder.device();
    this.reopenBackoffNanos = reopenBackoff.toNanos();
    this.logContext = logContext;
    this.status = new WatchdogStatus(false, false, false,
        List.of(reason(DisarmReason.Kind.KIND_NO_CONFIG, "no configuration yet")), OptionalLong.empty(), 0,
        condition, Optional.empty(), false);
  }

  /** The status as of the latest tick or shutdown. */
  public WatchdogStatus status() {
    return status;
  }

  /**
   * One tick.
   *
   * @param nowNanos this node's monotonic time
   * @param verdict the latest quorum verdict (null before the first evaluation)
   * @param conditions config, policy and signals as of now
   */
  public WatchdogStatus tick(long nowNanos, QuorumVerdict verdict, ArmingConditions conditions) {
    if (state == State.SHUT_DOWN) {
      return status;
    }
    boolean held = verdict != null && verdict.holdsAt(nowNanos);
    if (!held) {
      heldSinceKnown = false;
    } else if (!heldSinceKnown) {
      heldSinceKnown = true;
      heldSinceNanos = nowNanos;
    }
    List<DisarmReason> signals = disarmSignals(conditions);
    boolean fence = conditions.quorumLossAction() == QuorumLossAction.FENCE;
    if (state == State.DISARMED) {
      checkPresence(nowNanos);
    }

    if (state == State.FEEDING && conditions.poisonPill().isPresent()) {
      // A requested fence (sbd message reset/off, or the controller): stop feeding whatever the policy says.
      state = State.FENCING;
      feeder.stop();
      OptionalLong lastFeed = feeder.lastFeedNanos();
      LOG.warn("{} event=fencing_started reason=poison_pill message=\"{}\" last_feed_age_ms={} watchdog_timeout={}",
          logContext, conditions.poisonPill().get(), lastFeed.isPresent()
              ? (nowNanos - lastFeed.getAsLong()) / 1_000_000 : -1,
          deviceTimeout.map(Duration::toString).orElse("?"));
    }
    if (state == State.FEEDING) {
      if (!signals.isEmpty()) {
        if (held || !fence) {
          disarm(signals);
        } else if (!refusalLogged) {
          refusalLogged = true;
          LOG.warn("{} event=disarm_refused reason=quorum_lost_under_fence signals=\"{}\"", logContext,
              describe(signals));
        }
      }
      if (state == State.FEEDING && fence && !held) {
        state = State.FENCING;
        feeder.stop();
        OptionalLong lastFeed = feeder.lastFeedNanos();
        LOG.warn("{} event=fencing_started reason=quorum_lost action=Fence last_feed_age_ms={} "
            + "watchdog_timeout={}", logContext, lastFeed.isPresent() ? (nowNanos - lastFeed.getAsLong()) / 1_000_000
            : -1, deviceTimeout.map(Duration::toString).orElse("?"));
      }
      if (state == State.FEEDING && !conditions.watchdogTimeout().equals(armedTimeout)) {
        retime(nowNanos, conditions.watchdogTimeout());
      }
      if (state == State.FEEDING) {
        feeder.allowUntil(feedUntil(nowNanos, verdict, fence), feedInterval(conditions));
      }
    } else if (state == State.FENCING) {
      if (!signals.isEmpty() && !refusalLogged) {
        refusalLogged = true;
        LOG.warn("{} event=disarm_refused reason=fencing_in_progress signals=\"{}\"", logContext, describe(signals));
      }
    } else if (state == State.DISARMED && signals.isEmpty() && held
        && nowNanos - heldSinceNanos >= conditions.armingDelay().toNanos()
        && (!openAttemptBlocked || nowNanos - nextOpenAttemptNanos >= 0)) {
      arm(nowNanos, conditions.watchdogTimeout());
      if (state == State.FEEDING) {
        feeder.allowUntil(feedUntil(nowNanos, verdict, fence), feedInterval(conditions));
      }
    }

    List<DisarmReason> reasons = new ArrayList<>();
    if (state == State.DISARMED) {
      reasons.addAll(signals);
      if (signals.isEmpty()) {
        unavailable.ifPresent(u -> reasons.add(reason(DisarmReason.Kind.KIND_WATCHDOG_UNAVAILABLE, u)));
        if (!held) {
          reasons.add(reason(DisarmReason.Kind.KIND_ARMING_DELAY, "quorum not held"));
        } else if (nowNanos - heldSinceNanos < conditions.armingDelay().toNanos()) {
          reasons.add(reason(DisarmReason.Kind.KIND_ARMING_DELAY, "quorum held for "
              + Duration.ofNanos(nowNanos - heldSinceNanos).toMillis() + "ms of " + conditions.armingDelay()));
        }
      }
    }
    boolean isolated = conditions.configKnown() && conditions.quorumLossAction() == QuorumLossAction.EXCLUDE && !held;
    status = snapshot(reasons, isolated);
    return status;
  }

  /**
   * The feed deadline for a tick at {@code nowNanos}: under Fence the verdict's {@code heldUntil} (the caller has
   * checked it holds now); otherwise one window after the tick, so only the quorum loop's liveness gates it.
   */
  private static long feedUntil(long nowNanos, QuorumVerdict verdict, boolean fence) {
    if (fence) {
      return verdict.heldUntilNanos();
    }
    return nowNanos + (verdict == null ? 0 : verdict.windowNanos());
  }

  /**
   * SIGTERM: feeding ⇒ magic close; starving ⇒ close without magic so the fence completes, and the status keeps
   * saying armed and fencing (that is not a clean disarm). Idempotent.
   */
  public WatchdogStatus shutdown() {
    if (state == State.FEEDING) {
      try {
        feeder.stopThen(d -> {
          d.magicClose();
          return null;
        });
        LOG.info("{} event=disarmed reason=shutting_down device={}", logContext, device.name());
      } catch (WatchdogException e) {
        LOG.error("{} event=disarm_failed reason=shutting_down error=\"{}\"", logContext, e.getMessage());
      }
    } else if (state == State.FENCING) {
      try {
        feeder.stopThen(d -> {
          d.closeWithoutMagic();
          return null;
        });
        LOG.warn("{} event=shutdown_while_fencing action=closed_without_magic_close device={}", logContext,
            device.name());
      } catch (WatchdogException e) {
        LOG.error("{} event=close_failed error=\"{}\"", logContext, e.getMessage());
      }
      state = State.SHUT_DOWN;
      shutDownWhileFencing = true;
      status = snapshot(List.of(), false);
      return status;
    }
    state = State.SHUT_DOWN;
    status = snapshot(List.of(reason(DisarmReason.Kind.KIND_SHUTTING_DOWN, "agent stopping")), false);
    return status;
  }

  private void arm(long nowNanos, Duration timeout) {
    Optional<Boolean> nowayout = device.nowayout();
    if (nowayout.orElse(false)) {
      blockOpen(nowNanos, "nowayout: " + device.name() + " can never be disarmed once opened (maintenance, the"
          + " disable file and agent restarts would reset the node); load the driver with nowayout=0");
      return;
    }
    try {
      Duration actual = feeder.open(timeout, nowNanos);
      deviceTimeout = Optional.of(actual);
      armedTimeout = timeout;
      state = State.FEEDING;
      openAttemptBlocked = false;
      unavailable = Optional.empty();
      unavailableFromProbe = false;
      refusalLogged = false;
      condition = "ok";
      LOG.info("{} event=armed device={} timeout={} ioctl={}", logContext, device.name(), actual,
          device.supportsIoctl());
    } catch (WatchdogException e) {
      blockOpen(nowNanos, e.getMessage());
    }
  }

  /**
   * While disarmed, at most every reopen backoff: a device known missing is reported before an open is even
   * allowed, and once it appears (e.g. {@code modprobe softdog}) the next tick may arm without waiting out the
   * backoff.
   */
  private void checkPresence(long nowNanos) {
    if (presenceChecked && nowNanos - nextPresenceCheckNanos < 0) {
      return;
    }
    presenceChecked = true;
    nextPresenceCheckNanos = nowNanos + reopenBackoffNanos;
    Optional<String> problem = device.presenceProblem();
    if (problem.isPresent()) {
      blockOpen(nowNanos, problem.get());
      unavailableFromProbe = true;
    } else if (unavailableFromProbe) {
      LOG.info("{} event=watchdog_present device={} detail=\"the device appeared; arming may proceed\"", logContext,
          device.name());
      unavailable = Optional.empty();
      unavailableFromProbe = false;
      openAttemptBlocked = false;
      condition = "not opened";
    }
  }

  /**
   * The policy's watchdog timeout changed while armed (and quorum held, or the action is not Fence): the device
   * runs with the timeout it was opened with, so it is closed (magic close: the timer stops) and opened again with
   * the new one at once. Otherwise a longer timeout brings a longer feed interval against the short running timer
   * (2 s to 30 s: a feed every 3 s against a 2 s timer resets every node of the group), and a shorter one leaves the
   * device running longer than the controller counts on when it decides a silent node has fenced itself.
   *
   * <p>A failed magic close still closes the device ({@link WatchdogDevice#magicClose}); its timer may still run (the
   * 'V' never arrived) or may have stopped (the card was disabled). It is opened again at once either way: the node
   * holds quorum, an open device left unfed would reset it, and a closed one protects nothing while the status says
   * armed. Should that open fail too, the supervisor is disarmed, reports the device unavailable and re-arms through
   * {@link #arm} after the reopen backoff.
   */
  private void retime(long nowNanos, Duration timeout) {
    Duration before = deviceTimeout.orElse(armedTimeout);
    try {
      feeder.stopThen(d -> {
        d.magicClose();
        return null;
      });
    } catch (WatchdogException e) {
      LOG.error("{} event=watchdog_retime_close_failed device={} from={} to={} error=\"{}\" detail=\"the device is "
          + "closed anyway and its timer may still run; opening it again with the new timeout\"", logContext,
          device.name(), before, timeout, e.getMessage());
    }
    try {
      Duration actual = feeder.open(timeout, nowNanos);
      deviceTimeout = Optional.of(actual);
      armedTimeout = timeout;
      LOG.warn("{} event=watchdog_retimed device={} from={} to={}", logContext, device.name(), before, actual);
    } catch (WatchdogException e) {
      state = State.DISARMED;
      deviceTimeout = Optional.empty();
      condition = "not opened";
      blockOpen(nowNanos, e.getMessage());
    }
  }

  /**
   * The policy's feed interval, but never more than a third of the timeout the device actually runs with (read back
   * at open: a driver may round or cap the request).
   */
  private Duration feedInterval(ArmingConditions conditions) {
    Duration interval = conditions.feedInterval();
    Duration third = deviceTimeout.map(t -> t.dividedBy(3)).orElse(interval);
    return !third.isZero() && !third.isNegative() && third.compareTo(interval) < 0 ? third : interval;
  }

  private void blockOpen(long nowNanos, String why) {
    boolean changed = !unavailable.equals(Optional.of(why));
    unavailable = Optional.of(why);
    unavailableFromProbe = false;
    condition = why;
    openAttemptBlocked = true;
    nextOpenAttemptNanos = nowNanos + reopenBackoffNanos;
    if (changed) {
      LOG.error("{} event=watchdog_unavailable device={} detail=\"{}\" retry_in={}", logContext, device.name(), why,
          Duration.ofNanos(reopenBackoffNanos));
    }
  }

  private void disarm(List<DisarmReason> why) {
    try {
      feeder.stopThen(d -> {
        d.magicClose();
        return null;
      });
      condition = "not opened";
      LOG.info("{} event=disarmed reason=\"{}\" device={}", logContext, describe(why), device.name());
    } catch (WatchdogException e) {
      condition = e.getMessage();
      LOG.error("{} event=disarm_failed reason=\"{}\" error=\"{}\"", logContext, describe(why), e.getMessage());
    }
    state = State.DISARMED;
    deviceTimeout = Optional.empty();
  }

  private static List<DisarmReason> disarmSignals(ArmingConditions c) {
    List<DisarmReason> reasons = new ArrayList<>();
    if (!c.configKnown()) {
      reasons.add(reason(DisarmReason.Kind.KIND_NO_CONFIG, "no configuration yet"));
      return reasons;
    }
    if (c.mode() == Mode.NOTIFY) {
      reasons.add(reason(DisarmReason.Kind.KIND_NOTIFY_MODE, "mode Notify never arms"));
    }
    // Tested one by one rather than with ifPresent: this runs at every tick, and five captured lambdas per tick are
    // five slow allocations without C2.
    if (c.maintenance().isPresent()) {
      reasons.add(reason(DisarmReason.Kind.KIND_MAINTENANCE, c.maintenance().get()));
    }
    if (c.beingRemoved().isPresent()) {
      reasons.add(reason(DisarmReason.Kind.KIND_BEING_REMOVED, c.beingRemoved().get()));
    }
    if (c.disableFile().isPresent()) {
      reasons.add(reason(DisarmReason.Kind.KIND_DISABLE_FILE, c.disableFile().get()));
    }
    if (c.noGossipKey().isPresent()) {
      reasons.add(reason(DisarmReason.Kind.KIND_NO_GOSSIP_KEY, c.noGossipKey().get()));
    }
    if (c.poisonPill().isPresent()) {
      reasons.add(reason(DisarmReason.Kind.KIND_POISON_PILL, c.poisonPill().get()
          + " (clear it with: sbd -d DEVICE message NODE clear)"));
    }
    return reasons;
  }

  private WatchdogStatus snapshot(List<DisarmReason> reasons, boolean isolated) {
    // A node stopped while fencing stays armed and fencing in every later status: its reset is still due.
    boolean fencing = state == State.FENCING || shutDownWhileFencing;
    boolean armed = state == State.FEEDING || fencing;
    String shownCondition = state == State.FEEDING ? feeder.keepaliveFailure().orElse(condition) : condition;
    return new WatchdogStatus(armed, fencing, isolated, reasons, feeder.lastFeedNanos(), feeder.feedsTotal(),
        shownCondition, armed ? deviceTimeout : Optional.empty(), !armed && unavailable.isPresent());
  }

  private static DisarmReason reason(DisarmReason.Kind kind, String detail) {
    return DisarmReason.newBuilder().setKind(kind).setDetail(detail).build();
  }

  private static String describe(List<DisarmReason> reasons) {
    StringBuilder out = new StringBuilder();
    for (DisarmReason r : reasons) {
      if (out.length() > 0) {
        out.append(", ");
      }
      out.append(r.getKind().name().replace("KIND_", "").toLowerCase(java.util.Locale.ROOT));
      if (!r.getDetail().isEmpty()) {
        out.append(": ").append(r.getDetail());
      }
    }
    return out.toString();
  }
}
