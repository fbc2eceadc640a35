package dev.fencing.agent.watchdog;

import dev.fencing.policy.Mode;
import dev.fencing.policy.QuorumLossAction;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything besides quorum that decides whether the watchdog may be armed, as of one evaluation tick.
 *
 * @param configKnown a configuration (file, controller or cache) is known
 * @param mode Watchdog or Notify
 * @param quorumLossAction Fence, Exclude or Wait
 * @param watchdogTimeout the timeout to set on the device
 * @param armingDelay quorum must have been held continuously this long before arming
 * @param feedInterval keepalive period while feeding
 * @param maintenance the controller's maintenance signal (its source), if any
 * @param beingRemoved why the node is being removed from the group, if it is
 * @param disableFile the disable file's first line ("" when empty), if the file exists
 * @param noGossipKey why gossip runs unauthenticated, when the group has no keyring and plaintext gossip was not
 *     allowed explicitly ({@code --allow-plaintext-gossip})
 * @param poisonPill a reset/off message in this node's slot on the shared disk ("reset from vm"): a requested fence;
 *     feeding stops at once and the node does not arm again until the message is cleared
 */
public record ArmingConditions(
    boolean configKnown,
    Mode mode,
    QuorumLossAction quorumLossAction,
    Duration watchdogTimeout,
    Duration armingDelay,
    Duration feedInterval,
    Optional<String> maintenance,
    Optional<String> beingRemoved,
    Optional<String> disableFile,
    Optional<String> noGossipKey,
    Optional<String> poisonPill) {

  public ArmingConditions {
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(quorumLossAction, "quorumLossAction");
    Objects.requireNonNull(watchdogTimeout, "watchdogTimeout");
    Objects.requireNonNull(armingDelay, "armingDelay");
    Objects.requireNonNull(feedInterval, "feedInterval");
    Objects.requireNonNull(maintenance, "maintenance");
    Objects.requireNonNull(beingRemoved, "beingRemoved");
    Objects.requireNonNull(disableFile, "disableFile");
    Objects.requireNonNull(noGossipKey, "noGossipKey");
    Objects.requireNonNull(poisonPill, "poisonPill");
  }

  /** Conditions without a poison pill. */
  public ArmingConditions(boolean configKnown, Mode mode, QuorumLossAction quorumLossAction,
      Duration watchdogTimeout, Duration armingDelay, Duration feedInterval, Optional<String> maintenance,
      Optional<String> beingRemoved, Optional<String> disableFile, Optional<String> noGossipKey) {
    this(configKnown, mode, quorumLossAction, watchdogTimeout, armingDelay, feedInterval, maintenance, beingRemoved,
        disableFile, noGossipKey, Optional.empty());
  }

  /** Conditions with a gossip keyring (or plaintext gossip allowed). */
  public ArmingConditions(boolean configKnown, Mode mode, QuorumLossAction quorumLossAction,
      Duration watchdogTimeout, Duration armingDelay, Duration feedInterval, Optional<String> maintenance,
      Optional<String> beingRemoved, Optional<String> disableFile) {
    this(configKnown, mode, quorumLossAction, watchdogTimeout, armingDelay, feedInterval, maintenance, beingRemoved,
        disableFile, Optional.empty());
  }

  /** No configuration yet: never arms. */
  public static ArmingConditions noConfig() {
    return new ArmingConditions(false, Mode.NOTIFY, QuorumLossAction.WAIT, Duration.ofSeconds(60),
        Duration.ofSeconds(60), Duration.ofSeconds(10), Optional.empty(), Optional.empty(), Optional.empty());
  }

  /** A copy with the disable file's state replaced. */
  public ArmingConditions withDisableFile(Optional<String> reason) {
    return new ArmingConditions(configKnown, mode, quorumLossAction, watchdogTimeout, armingDelay, feedInterval,
        maintenance, beingRemoved, reason, noGossipKey, poisonPill);
  }

  /** A copy with the poison pill's state replaced. */
  public ArmingConditions withPoisonPill(Optional<String> pill) {
    return new ArmingConditions(configKnown, mode, quorumLossAction, watchdogTimeout, armingDelay, feedInterval,
        maintenance, beingRemoved, disableFile, noGossipKey, pill);
  }
}
