package dev.fencing.memberlist.codec;

import dev.fencing.memberlist.limits.Limit;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;

/**
 * LZW as memberlist uses it (Go {@code compress/lzw} with LSB bit order and 8-bit literals), bit-compatible in
 * both directions.
 *
 * <p>Codes 0..255 are literals, 256 clears the dictionary, 257 ends the data; new dictionary codes start at 258.
 * Codes are written least-significant-bit first with a width of 9 bits that grows by one whenever the next code to
 * be assigned reaches a power of two, up to 12 bits. The compressor starts with a clear code, and when its next
 * code would be 4095 it emits a clear code and starts over with an empty dictionary; at the end it writes the
 * pending code, advances its code counter once more (so the end code may already use the wider width), then the
 * end code, then the remaining bits padded with zeros.
 */
public final class Lzw {
  private static final int CLEAR = 256;
  private static final int EOF = 257;
  private static final int MAX_CODE = 4095;
  private static final int MAX_WIDTH = 12;
  private static final int MIN_TABLE = 64;
  private static final int MAX_TABLE = 1 << 13;

  private Lzw() {}

  /** Compresses {@code data} exactly as Go's {@code lzw.NewWriter(w, lzw.LSB, 8)} followed by Write and Close. */
  public static byte[] compress(byte[] data) {
    BitWriter out = new BitWriter(data.length / 2 + 16);
    out.write(CLEAR);
    if (data.length == 0) {
      out.write(EOF);
      return out.finish();
    }
    // dictionary: key (prefix code << 8 | next byte) -> code, open addressing over a power-of-two table at most half
    // full: one entry per code written, so a packet of a few hundred bytes needs a few KiB, not the 64 KiB a full
    // 4096-code dictionary does (most of what an idle agent allocates is otherwise these tables)
    int entries = Math.min(data.length, MAX_CODE - EOF);
    int size = MIN_TABLE;
    while (size < 2 * entries && size < MAX_TABLE) {
      size <<= 1;
    }
    int[] keys = new int[size];
    int[] values = new int[keys.length];
    Arrays.fill(keys, -1);
    int mask = keys.length - 1;
    int hi = EOF;
    int code = data[0] & 0xff;
    for (int i = 1; i < data.length; i++) {
      int literal = data[i] & 0xff;
      int key = code << 8 | literal;
      int h = hash(key) & mask;
      boolean found = false;
      while (keys[h] != -1) {
        if (keys[h] == key) {
          code = values[h];
          found = true;
          break;
        }
        h = (h + 1) & mask;
      }
      if (found) {
        continue;
      }
      out.write(code);
      code = literal;
      hi = out.advance(hi);
      if (hi == EOF) {
        Arrays.fill(keys, -1);
        continue;
      }
      keys[h] = key;
      values[h] = hi;
    }
    out.write(code);
    out.advance(hi);
    out.write(EOF);
    return out.finish();
  }

  private static int hash(int key) {
    return (key >>> 12 ^ key) * 0x9E3779B1 >>> 19;
  }

  /**
   * Decompresses data produced by any Go-compatible LZW writer (LSB, 8-bit literals).
   *
   * @param maxOutput refuse to produce more than this many bytes (a decompression-bomb cap)
   * @throws LimitExceededException when the output would exceed {@code maxOutput} (checked before writing it)
   * @throws MalformedMessageException on an invalid code or a missing end code
   */
  public static byte[] decompress(byte[] data, int maxOutput) throws MalformedMessageException {
    ByteArrayOutputStream out = new ByteArrayOutputStream(Math.min(maxOutput, Math.max(64, data.length * 3)));
    int[] prefix = new int[MAX_CODE + 1];
    byte[] suffix = new byte[MAX_CODE + 1];
    byte[] first = new byte[MAX_CODE + 1];
    int[] length = new int[MAX_CODE + 1];
    byte[] scratch = new byte[MAX_CODE + 2];
    int width = 9;
    int hi = EOF;
    int overflow = 1 << width;
    int last = -1;
    long bits = 0;
    int nBits = 0;
    int pos = 0;
    int written = 0;
    while (true) {
      while (nBits < width) {
        if (pos >= data.length) {
          throw new MalformedMessageException("LZW data ends without an end code");
        }
        bits |= (long) (data[pos++] & 0xff) << nBits;
        nBits += 8;
      }
      int code = (int) (bits & ((1 << width) - 1));
      bits >>>= width;
      nBits -= width;
      if (code == CLEAR) {
        width = 9;
        hi = EOF;
        overflow = 1 << width;
        last = -1;
        continue;
      }
      if (code == EOF) {
        return out.toByteArray();
      }
      int len;
      byte head;
      if (code < CLEAR) {
        scratch[0] = (byte) code;
        len = 1;
        head = (byte) code;
      } else if (code > EOF && (code < hi || (code == MAX_CODE && hi == MAX_CODE && last == -1))) {
        len = length[code];
        head = first[code];
        expand(code, len, prefix, suffix, scratch);
      } else if (code == hi && last != -1) {
        // the code being defined right now: last's expansion followed by its own first byte
        int lastLen = last < CLEAR ? 1 : length[last];
        head = last < CLEAR ? (byte) last : first[last];
        expand(last, lastLen, prefix, suffix, scratch);
        scratch[lastLen] = head;
        len = lastLen + 1;
      } else {
        throw new MalformedMessageException("LZW invalid code " + code + " (next code " + hi + ")");
      }
      if (written + (long) len > maxOutput) {
        throw new LimitExceededException(
            Limit.DECOMPRESSED_BYTES, "LZW output exceeds the " + maxOutput + " bytes allowed");
      }
      out.write(scratch, 0, len);
      written += len;
      if (last != -1) {
        prefix[hi] = last;
        suffix[hi] = head;
        first[hi] = last < CLEAR ? (byte) last : first[last];
        length[hi] = (last < CLEAR ? 1 : length[last]) + 1;
      }
      last = code;
      hi++;
      if (hi >= overflow) {
        if (width == MAX_WIDTH) {
          // dictionary full: no new entries until the writer sends a clear code
          last = -1;
          hi--;
        } else {
          width++;
          overflow = 1 << width;
        }
      }
    }
  }

  /** Writes the {@code len} bytes that {@code code} stands for into {@code out[0..len)}. */
  private static void expand(int code, int len, int[] prefix, byte[] suffix, byte[] out) {
    int c = code;
    for (int i = len - 1; i > 0; i--) {
      out[i] = suffix[c];
      c = prefix[c];
    }
    out[0] = (byte) c;
  }

  /** LSB-first variable-width code writer that tracks the writer-side code counter and width. */
  private static final class BitWriter {
    private byte[] buf;
    private int size;
    private long bits;
    private int nBits;
    private int width = 9;
    private int overflow = 1 << 9;

    BitWriter(int capacity) {
      buf = new byte[capacity];
    }

    void write(int code) {
      bits |= (long) code << nBits;
      nBits += width;
      while (nBits >= 8) {
        put((byte) bits);
        bits >>>= 8;
        nBits -= 8;
      }
    }

    /** Advances the next-code counter; returns the new counter, or EOF after emitting a clear code (reset). */
    int advance(int hi) {
      hi++;
      if (hi == overflow) {
        width++;
        overflow <<= 1;
      }
      if (hi == MAX_CODE) {
        write(CLEAR);
        width = 9;
        overflow = 1 << 9;
        return EOF;
      }
      return hi;
    }

    byte[] finish() {
      if (nBits > 0) {
        put((byte) bits);
      }
      return Arrays.copyOf(buf, size);
    }

    private void put(byte b) {
      if (size == buf.length) {
        buf = Arrays.copyOf(buf, buf.length * 2 + 16);
      }
      buf[size++] = b;
    }
  }
}
