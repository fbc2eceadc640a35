package dev.fencing.memberlist.codec;

import dev.fencing.memberlist.limits.Limit;

/**
 * What is left of one packet's (or one stream message's) caps while it is decoded: LZW output bytes and compound
 * parts are drawn from one allowance for the whole input, so a compound of LZW bombs, or a bomb that inflates to
 * more compounds of bombs, runs dry once in total rather than once per layer. Not thread-safe: one per decode.
 */
final class DecodeBudget {
  private final WireLimits limits;
  private int decompressedLeft;
  private int partsLeft;

  DecodeBudget(WireLimits limits) {
    this.limits = limits;
    this.decompressedLeft = limits.maxDecompressedBytes();
    this.partsLeft = limits.maxCompoundParts();
  }

  /** Inflates {@code lzw}, refusing to produce more than what is left of the decompression allowance. */
  byte[] decompress(byte[] lzw) throws MalformedMessageException {
    byte[] plain;
    try {
      plain = Lzw.decompress(lzw, decompressedLeft);
    } catch (LimitExceededException e) {
      throw new LimitExceededException(
          Limit.DECOMPRESSED_BYTES,
          "LZW output exceeds the " + decompressedLeft + " bytes left of the "
              + limits.maxDecompressedBytes() + " one packet or stream message may inflate to");
    }
    decompressedLeft -= plain.length;
    return plain;
  }

  /** Takes {@code n} compound parts from the allowance. */
  void takeParts(int n) throws LimitExceededException {
    if (n > partsLeft) {
      throw new LimitExceededException(
          Limit.COMPOUND_PARTS,
          "compound of " + n + " parts exceeds the " + partsLeft + " left of the packet's "
              + limits.maxCompoundParts());
    }
    partsLeft -= n;
  }

  /** Checks that a layer at {@code depth} (0 = outermost) is allowed. */
  void checkDepth(int depth) throws LimitExceededException {
    if (depth > limits.maxNestingDepth()) {
      throw new LimitExceededException(
          Limit.NESTING_DEPTH,
          "compound/compressed layers nested deeper than " + limits.maxNestingDepth());
    }
  }
}
