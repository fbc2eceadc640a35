package dev.fencing.agent.quorum;

import java.util.Objects;
import java.util.Optional;
import java.util.random.RandomGenerator;

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
 * @param digest what the sender can reach, in relayed groups (wire version 2); empty in version 1
 * @param wantsEcho the sender asks the addressee to heartbeat it back even if it is not the addressee's overlay
 *     neighbour (it is the sender's neighbour or detour); false on a heartbeat that only answers. Version 1 cannot
 *     say false: a version 1 heartbeat always wants an echo (older agents heartbeat everyone)
 * @param compact the heartbeat travels in the compact wire version 3, which only agents whose boot id
 *     {@linkplain #readsCompactDigests says so} read. Forced false unless both boot ids (the echo's if there is one)
 *     carry the version 3 tags and both times lie more than a millisecond above {@code Long.MIN_VALUE}; when true,
 *     both times are whole milliseconds (rounded down, so an echo of a compact send time can only make evidence
 *     older) and {@code echoNanos} is 0 without an echo, exactly what version 3 carries
 * @param wantsDigest the sender asks the addressee, which is not its overlay neighbour, to put its reach digest into
 *     the answer: the sender is short of evidence ({@link QuorumEvaluator#heartbeatTargets}). Only version 3 carries
 *     it (forced false otherwise)
 */
public record Heartbeat(
    String group, String sender, long senderBootId, long sendNanos, long echoBootId, long echoNanos,
    Optional<ReachDigest> digest, boolean wantsEcho, boolean compact, boolean wantsDigest) {

  /** Boot id value meaning "no echo": the sender has not received anything from the addressee yet. */
  public static final long NO_ECHO = 0L;

  /** Longest accepted group or member name, in UTF-8 bytes (a Kubernetes node name is at most 253). */
  public static final int MAX_NAME_BYTES = 253;

  /**
   * The top 24 bits of every boot id of an agent that reads reach digests (wire version 2). An agent that sees a
   * version 1 heartbeat from a boot id without this tag knows the sender is an older agent and answers it in
   * version 1 ({@link QuorumEvaluator#heartbeatTargets}); an older agent's random boot id carries it by chance with
   * probability 2^-24.
   */
  static final long DIGEST_CAPABLE_TAG = 0x5EA1EDL;

  /**
   * Bits 39..24 of every boot id of an agent that also reads compact digests (wire version 3), below
   * {@link #DIGEST_CAPABLE_TAG}. An agent that reads only version 2 carries it by chance with probability 2^-16; a
   * peer it misleads that way is recognised by the version 2 digests it sends (see {@link QuorumEvaluator}).
   */
  static final long COMPACT_CAPABLE_TAG = 0xC0DEL;

  /** Without a digest (wire version 1). */
  public Heartbeat(String group, String sender, long senderBootId, long sendNanos, long echoBootId, long echoNanos) {
    this(group, sender, senderBootId, sendNanos, echoBootId, echoNanos, Optional.empty(), true, false, false);
  }

  /** With a digest in wire version 2 (or none), as agents before version 3 sent it. */
  public Heartbeat(String group, String sender, long senderBootId, long sendNanos, long echoBootId, long echoNanos,
      Optional<ReachDigest> digest, boolean wantsEcho) {
    this(group, sender, senderBootId, sendNanos, echoBootId, echoNanos, digest, wantsEcho, false, false);
  }

  /** Without a request for a digest. */
  public Heartbeat(String group, String sender, long senderBootId, long sendNanos, long echoBootId, long echoNanos,
      Optional<ReachDigest> digest, boolean wantsEcho, boolean compact) {
    this(group, sender, senderBootId, sendNanos, echoBootId, echoNanos, digest, wantsEcho, compact, false);
  }

  /**
   * A fresh boot id for this agent process: the digest-capable tag, the compact-capable tag, 23 random bits, never
   * 0. (A boot id only tells this process's send times from an earlier one's of the same node.)
   */
  public static long newBootId(RandomGenerator random) {
    return (DIGEST_CAPABLE_TAG << 40) | (COMPACT_CAPABLE_TAG << 24) | (random.nextLong() & 0xFF_FFFEL) | 1L;
  }

  /** True when {@code bootId} was made by an agent that reads compact heartbeats (wire version 3). */
  public static boolean readsCompactDigests(long bootId) {
    return readsDigests(bootId) && ((bootId >>> 24) & 0xFFFF) == COMPACT_CAPABLE_TAG;
  }

  /** True when {@code bootId} was made by {@link #newBootId}: its agent reads reach digests. */
  public static boolean readsDigests(long bootId) {
    return (bootId >>> 40) == DIGEST_CAPABLE_TAG;
  }

  public Heartbeat {
    Objects.requireNonNull(digest, "digest");
    compact = compact && readsCompactDigests(senderBootId) && sendNanos >= MIN_COMPACT_NANOS
        && (echoBootId == NO_ECHO || readsCompactDigests(echoBootId) && echoNanos >= MIN_COMPACT_NANOS);
    wantsDigest = wantsDigest && compact;
    if (compact) {
      sendNanos = wholeMillis(sendNanos);
      echoNanos = echoBootId == NO_ECHO ? 0 : wholeMillis(echoNanos);
    }
    Objects.requireNonNull(group, "group");
    Objects.requireNonNull(sender, "sender");
    if (sender.isEmpty()) {
      throw new IllegalArgumentException("heartbeat sender name is empty");
    }
    if (senderBootId == NO_ECHO) {
      throw new IllegalArgumentException("heartbeat sender boot id must not be 0 (reserved for 'no echo')");
    }
  }

  /** Below this a time rounded down to whole milliseconds would not fit a long. */
  private static final long MIN_COMPACT_NANOS = Long.MIN_VALUE + 1_000_000L;

  private static long wholeMillis(long nanos) {
    return Math.floorDiv(nanos, 1_000_000L) * 1_000_000L;
  }

  /** True when this heartbeat carries an echo of one of the addressee's send times. */
  public boolean hasEcho() {
    return echoBootId != NO_ECHO;
  }
}
