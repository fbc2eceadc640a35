package dev.fencing.agent.quorum;

import java.util.Arrays;

/**
 * What the sender of a heartbeat can reach: for every expected member (in {@link Overlay#members()} order) the age
 * of its freshest evidence, as a 4-bit level, counted from the instant the sender received the send time the
 * heartbeat echoes (agents before wire version 3: from the instant the heartbeat was built, which is later and so
 * more conservative).
 *
 * <p>Level {@code v} in 0..{@link #MAX_LEVEL} means "evidence at most {@code v × unit} old" (ages are rounded
 * <em>up</em>, and evidence newer than that instant counts as age 0, so a relayed age is never younger than the
 * truth); {@link #NONE} means no evidence within {@code MAX_LEVEL × unit}, or an entry left out (the addressee has
 * it already); a receiver skips it either way. A receiver uses the digest only together with the echo of
 * its own send time in the same heartbeat: the relayed evidence instant is {@code echo − v × unit} on the
 * receiver's clock (see {@link QuorumEvaluator}).
 *
 * @param fingerprint {@link Overlay#fingerprint()} of the sender's expected set; ignored on mismatch
 * @param unitMillis the age of one level, in milliseconds (1..65535)
 * @param packed two levels per byte, the even index in the high nibble
 * @param count number of members
 */
public record ReachDigest(long fingerprint, int unitMillis, byte[] packed, int count) {

  /** Level meaning "no evidence within {@code MAX_LEVEL × unit}". */
  public static final int NONE = 15;
  /** Highest level that carries an age. */
  public static final int MAX_LEVEL = 14;
  /** Most members a digest may describe (memberlist keeps at most 4096 nodes too). */
  public static final int MAX_MEMBERS = 4096;

  public ReachDigest {
    if (unitMillis < 1 || unitMillis > 0xFFFF) {
      throw new IllegalArgumentException("digest unit must be 1..65535 ms, got " + unitMillis);
    }
    if (count < 0 || count > MAX_MEMBERS) {
      throw new IllegalArgumentException("digest describes " + count + " members, at most " + MAX_MEMBERS);
    }
    if (packed.length != packedLength(count)) {
      throw new IllegalArgumentException("digest of " + count + " members needs " + packedLength(count)
          + " bytes, got " + packed.length);
    }
  }

  /** Bytes needed for {@code count} levels. */
  public static int packedLength(int count) {
    return (count + 1) / 2;
  }

  /** The level for a given age: {@code ceil(age / unit)}, or {@link #NONE} beyond {@link #MAX_LEVEL}. */
  public static int levelFor(long ageNanos, long unitNanos) {
    if (ageNanos <= 0) {
      return 0;
    }
    long level = (ageNanos + unitNanos - 1) / unitNanos;
    return level > MAX_LEVEL ? NONE : (int) level;
  }

  /** The level of member {@code index}. */
  public int level(int index) {
    int b = packed[index >> 1];
    return (index & 1) == 0 ? (b >> 4) & 0xF : b & 0xF;
  }

  /** Sets the level of member {@code index} in a packed array being built. */
  static void setLevel(byte[] packed, int index, int level) {
    int i = index >> 1;
    packed[i] = (byte) ((index & 1) == 0 ? (packed[i] & 0x0F) | (level << 4) : (packed[i] & 0xF0) | level);
  }

  /** The age a level stands for, in nanoseconds (never called with {@link #NONE}). */
  public long ageNanos(int level) {
    return level * unitMillis * 1_000_000L;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ReachDigest d && d.fingerprint == fingerprint && d.unitMillis == unitMillis
        && d.count == count && Arrays.equals(d.packed, packed);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(fingerprint) * 31 + Arrays.hashCode(packed);
  }

  @Override
  public String toString() {
    return "ReachDigest[fingerprint=" + Long.toHexString(fingerprint) + ", unitMillis=" + unitMillis + ", count="
        + count + "]";
  }
}
