package dev.fencing.agent.quorum;

import java.util.Objects;

/**
 * One quorum heartbeat from {@code sender} to one expected peer.
 *
 * <p>{@code sendNanos} is the sender's monotonic time when it sent this heartbeat. {@code echoNanos} is the latest
 * {@code sendNanos} the sender has received from the addressee, and {@code echoBootId} the boot id that time belongs
 * to. When the addressee receives its own send time back, it has proof of a round trip addressee → sender →
 * addressee; that is the only thing that counts towards quorum.
 *
 * @param group the group (gossip cluster) the sender belongs to; a heartbeat for another group is ignored
 * @param sender the sender's member name
 * @param senderBootId random per agent process; monotonic times are meaningful only together with it
 * @param sendNanos the sender's monotonic send time
 * @param echoBootId the addressee's boot id the echo belongs to, {@link #NO_ECHO} if the sender has heard nothing
 * @param echoNanos the addressee's latest send time the sender received (meaningless without echoBootId)
 */
public record Heartbeat(
    String group, String sender, long senderBootId, long sendNanos, long echoBootId, long echoNanos) {

  /** Boot id value meaning "no echo": the sender has not received anything from the addressee yet. */
  public static final long NO_ECHO = 0L;

  /** Longest accepted group or member name, in UTF-8 bytes (a Kubernetes node name is at most 253). */
  public static final int MAX_NAME_BYTES = 253;

  public Heartbeat {
    Objects.requireNonNull(group, "group");
    Objects.requireNonNull(sender, "sender");
    if (sender.isEmpty()) {
      throw new IllegalArgumentException("heartbeat sender name is empty");
    }
    if (senderBootId == NO_ECHO) {
      throw new IllegalArgumentException("heartbeat sender boot id must not be 0 (reserved for 'no echo')");
    }
  }

  /** True when this heartbeat carries an echo of one of the addressee's send times. */
  public boolean hasEcho() {
    return echoBootId != NO_ECHO;
  }
}
