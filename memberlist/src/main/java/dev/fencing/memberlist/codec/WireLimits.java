package dev.fencing.memberlist.codec;

/**
 * Caps on what one packet or one stream message may make a node allocate, checked before the allocation. The
 * defaults sit far below a 64 MiB heap and far above anything a legitimate peer sends (a group of a thousand nodes
 * with full 512-byte metadata pushes about 650 KiB of state, sent LZW-compressed by default); Go memberlist's own
 * caps are 20 MiB frames, 2^20 node states, 20 MiB user data and 40 MiB decompressed, sized for servers.
 *
 * @param maxStreamMessageBytes wire bytes of one TCP stream message: the encrypted frame, or the plain or compressed
 *     message (a frame announcing more is refused from its 5-byte header)
 * @param maxPushPullNodes node states one push/pull may declare
 * @param maxPushPullStateBytes decoded bytes of one push/pull: header, node states and user state
 * @param maxUserStateBytes user state in one push/pull, and one reliable (stream) user message
 * @param maxDecompressedBytes LZW output of one packet or stream message, summed over every compressed layer in it
 * @param maxCompoundParts compound parts in one packet, summed over every compound layer in it
 * @param maxNestingDepth compound and compressed layers nested in one packet (Go sends at most two: a compressed
 *     compound)
 */
public record WireLimits(
    int maxStreamMessageBytes,
    int maxPushPullNodes,
    int maxPushPullStateBytes,
    int maxUserStateBytes,
    int maxDecompressedBytes,
    int maxCompoundParts,
    int maxNestingDepth) {

  /** Default {@link #maxStreamMessageBytes}: 1 MiB. */
  public static final int DEFAULT_MAX_STREAM_MESSAGE_BYTES = 1 << 20;
  /** Default {@link #maxPushPullNodes}. */
  public static final int DEFAULT_MAX_PUSH_PULL_NODES = 4096;
  /** Default {@link #maxPushPullStateBytes}: 1 MiB. */
  public static final int DEFAULT_MAX_PUSH_PULL_STATE_BYTES = 1 << 20;
  /** Default {@link #maxUserStateBytes}: 256 KiB. */
  public static final int DEFAULT_MAX_USER_STATE_BYTES = 256 << 10;
  /** Default {@link #maxDecompressedBytes}: 1 MiB. */
  public static final int DEFAULT_MAX_DECOMPRESSED_BYTES = 1 << 20;
  /** Default {@link #maxCompoundParts}: two full compounds' worth (one compound holds at most 255). */
  public static final int DEFAULT_MAX_COMPOUND_PARTS = 512;
  /** Default {@link #maxNestingDepth}. */
  public static final int DEFAULT_MAX_NESTING_DEPTH = 4;

  /** Every cap must be positive. */
  public WireLimits {
    requirePositive(maxStreamMessageBytes, "maxStreamMessageBytes");
    requirePositive(maxPushPullNodes, "maxPushPullNodes");
    requirePositive(maxPushPullStateBytes, "maxPushPullStateBytes");
    requirePositive(maxUserStateBytes, "maxUserStateBytes");
    requirePositive(maxDecompressedBytes, "maxDecompressedBytes");
    requirePositive(maxCompoundParts, "maxCompoundParts");
    requirePositive(maxNestingDepth, "maxNestingDepth");
  }

  /** The default caps. */
  public static WireLimits defaults() {
    return new WireLimits(
        DEFAULT_MAX_STREAM_MESSAGE_BYTES,
        DEFAULT_MAX_PUSH_PULL_NODES,
        DEFAULT_MAX_PUSH_PULL_STATE_BYTES,
        DEFAULT_MAX_USER_STATE_BYTES,
        DEFAULT_MAX_DECOMPRESSED_BYTES,
        DEFAULT_MAX_COMPOUND_PARTS,
        DEFAULT_MAX_NESTING_DEPTH);
  }

  private static void requirePositive(int value, String name) {
    if (value < 1) {
      throw new IllegalArgumentException(name + " must be >= 1, was " + value);
    }
  }
}
