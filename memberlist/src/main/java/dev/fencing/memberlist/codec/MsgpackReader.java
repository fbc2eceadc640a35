package dev.fencing.memberlist.codec;

import dev.fencing.memberlist.limits.Limit;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A lenient, bounded msgpack reader for memberlist's structs, reading either a byte array or a stream.
 *
 * <p>Lenient like go-msgpack's decoder: byte fields accept str, bin, nil or an array of small ints; integers any width
 * or signedness as long as the value is non-negative and fits; unknown map keys are skipped. Bounded: every declared
 * length is checked against the bytes left (array) or the remaining byte budget (stream) before anything is
 * allocated, stream payloads are read in chunks so a lying length costs only what the peer actually sent, and nesting
 * of skipped values is limited.
 */
final class MsgpackReader {
  private static final int MAX_SKIP_DEPTH = 32;
  private static final int STREAM_CHUNK = 64 * 1024;

  private final byte[] buf;
  private int pos;
  private final int end;
  private final InputStream in;
  private long budget;
  private Limit budgetLimit = Limit.STREAM_MESSAGE_BYTES;

  private MsgpackReader(byte[] buf, int pos, int end, InputStream in, long budget) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
    this.in = in;
    this.budget = budget;
  }

  /** Reads {@code buf[from..to)}. */
  static MsgpackReader of(byte[] buf, int from, int to) {
    return new MsgpackReader(buf, from, to, null, to - from);
  }

  /**
   * Reads from a stream, refusing to consume more than {@code budget} bytes in total ({@link
   * LimitExceededException} for {@link Limit#STREAM_MESSAGE_BYTES}).
   */
  static MsgpackReader of(InputStream in, long budget) {
    return new MsgpackReader(null, 0, 0, in, budget);
  }

  /**
   * Caps what is still read at {@code max} bytes under {@code limit}: a stream reader lowers its budget (and from
   * now on reports {@code limit} when it runs out); an array reader refuses at once when more than {@code max} bytes
   * are left, since decoding them would build objects from all of them.
   */
  void restrict(long max, Limit limit, String what) throws LimitExceededException {
    if (in == null) {
      if (end - pos > max) {
        throw new LimitExceededException(limit, what + " of " + (end - pos) + " bytes exceeds " + max);
      }
      return;
    }
    if (max < budget) {
      budget = max;
      budgetLimit = limit;
    }
  }

  /** Position in the array (array mode only): where the next value starts. */
  int position() {
    return pos;
  }

  int u8() throws MalformedMessageException, IOException {
    if (in == null) {
      if (pos >= end) {
        throw new MalformedMessageException("message truncated at byte " + pos);
      }
      return buf[pos++] & 0xff;
    }
    if (budget <= 0) {
      throw new LimitExceededException(budgetLimit, "stream message is longer than its limit");
    }
    int b = in.read();
    if (b < 0) {
      throw new EOFException("stream ended in the middle of a message");
    }
    budget--;
    return b;
  }

  private long beUint(int n) throws MalformedMessageException, IOException {
    long v = 0;
    for (int i = 0; i < n; i++) {
      v = (v << 8) | u8();
    }
    return v;
  }

  /** Reads exactly {@code n} bytes, checking {@code n} against what is left before allocating. */
  byte[] readRaw(long n, String what) throws MalformedMessageException, IOException {
    if (n < 0) {
      throw new MalformedMessageException(what + ": negative length " + n);
    }
    if (in == null) {
      if (n > end - pos) {
        throw new MalformedMessageException(
            what + ": declared length " + n + " exceeds the " + (end - pos) + " bytes left");
      }
      byte[] out = Arrays.copyOfRange(buf, pos, pos + (int) n);
      pos += (int) n;
      return out;
    }
    if (n > budget) {
      throw new LimitExceededException(
          budgetLimit, what + ": declared length " + n + " exceeds the " + budget + " bytes left of the limit");
    }
    int len = (int) n;
    byte[] out = new byte[Math.min(len, STREAM_CHUNK)];
    int got = 0;
    while (got < len) {
      if (got == out.length) {
        out = Arrays.copyOf(out, (int) Math.min(len, (long) out.length * 2));
      }
      int r = in.read(out, got, out.length - got);
      if (r < 0) {
        throw new EOFException(what + ": stream ended after " + got + " of " + len + " bytes");
      }
      got += r;
    }
    budget -= len;
    return out;
  }

  private void skipRaw(long n) throws MalformedMessageException, IOException {
    if (in == null) {
      if (n > end - pos) {
        throw new MalformedMessageException("declared length " + n + " exceeds the " + (end - pos) + " bytes left");
      }
      pos += (int) n;
      return;
    }
    for (long left = n; left > 0; ) {
      int chunk = (int) Math.min(left, STREAM_CHUNK);
      readRaw(chunk, "skipped value");
      left -= chunk;
    }
  }

  /** A map header; nil counts as an empty map. */
  int readMapHeader(String what) throws MalformedMessageException, IOException {
    int b = u8();
    long n;
    if ((b & 0xf0) == 0x80) {
      n = b & 0x0f;
    } else if (b == 0xde) {
      n = beUint(2);
    } else if (b == 0xdf) {
      n = beUint(4);
    } else if (b == 0xc0) {
      n = 0;
    } else {
      throw new MalformedMessageException(what + ": expected a msgpack map, found " + describe(b));
    }
    checkCount(n, 2, what);
    return (int) n;
  }

  private void checkCount(long n, int minBytesEach, String what) throws MalformedMessageException {
    long left = in == null ? end - pos : budget;
    if (n * minBytesEach > left) {
      throw new MalformedMessageException(what + ": declared " + n + " entries but only " + left + " bytes left");
    }
  }

  /**
   * A map key. Keys must be msgpack str (Go field names); an overlong key cannot match any field, so it is skipped
   * and returned as the empty string.
   */
  String readKey(String what) throws MalformedMessageException, IOException {
    int b = u8();
    long n = strLength(b);
    if (n < 0) {
      throw new MalformedMessageException(what + ": map key must be a string, found " + describe(b));
    }
    if (n > 32) {
      skipRaw(n);
      return "";
    }
    return new String(readRaw(n, what), StandardCharsets.ISO_8859_1);
  }

  /** Length of a str-family header, or -1 if {@code b} does not start a str. */
  private long strLength(int b) throws MalformedMessageException, IOException {
    if ((b & 0xe0) == 0xa0) {
      return b & 0x1f;
    }
    return switch (b) {
      case 0xd9 -> beUint(1);
      case 0xda -> beUint(2);
      case 0xdb -> beUint(4);
      default -> -1;
    };
  }

  /** A Go string field: msgpack str (bin is rejected, as Go does); nil reads as "". Must be valid UTF-8. */
  String readString(String field) throws MalformedMessageException, IOException {
    int b = u8();
    if (b == 0xc0) {
      return "";
    }
    long n = strLength(b);
    if (n < 0) {
      throw new MalformedMessageException("field " + field + ": expected a string, found " + describe(b));
    }
    byte[] raw = readRaw(n, "field " + field);
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(raw))
          .toString();
    } catch (CharacterCodingException e) {
      throw new MalformedMessageException("field " + field + ": string is not valid UTF-8");
    }
  }

  /** A Go []byte field: str, bin or array of ints 0..255; nil reads as null. */
  byte[] readBytes(String field) throws MalformedMessageException, IOException {
    int b = u8();
    if (b == 0xc0) {
      return null;
    }
    long n = strLength(b);
    if (n < 0) {
      n =
          switch (b) {
            case 0xc4 -> beUint(1);
            case 0xc5 -> beUint(2);
            case 0xc6 -> beUint(4);
            default -> -1;
          };
    }
    if (n >= 0) {
      return readRaw(n, "field " + field);
    }
    long count;
    if ((b & 0xf0) == 0x90) {
      count = b & 0x0f;
    } else if (b == 0xdc) {
      count = beUint(2);
    } else if (b == 0xdd) {
      count = beUint(4);
    } else {
      throw new MalformedMessageException("field " + field + ": expected bytes, found " + describe(b));
    }
    checkCount(count, 1, "field " + field);
    byte[] out = new byte[(int) count];
    for (int i = 0; i < count; i++) {
      out[i] = (byte) readUint(0xff, field + "[" + i + "]");
    }
    return out;
  }

  /** A non-negative integer of any msgpack width not above {@code max}; nil reads as 0. */
  long readUint(long max, String field) throws MalformedMessageException, IOException {
    int b = u8();
    long v;
    if (b <= 0x7f) {
      v = b;
    } else if (b >= 0xe0) {
      v = (byte) b;
    } else {
      v =
          switch (b) {
            case 0xc0 -> 0;
            case 0xcc -> beUint(1);
            case 0xcd -> beUint(2);
            case 0xce -> beUint(4);
            case 0xcf -> beUint(8);
            case 0xd0 -> (byte) beUint(1);
            case 0xd1 -> (short) beUint(2);
            case 0xd2 -> (int) beUint(4);
            case 0xd3 -> beUint(8);
            default -> throw new MalformedMessageException(
                "field " + field + ": expected an integer, found " + describe(b));
          };
      if (b == 0xcf && v < 0) {
        throw new MalformedMessageException("field " + field + ": value exceeds " + max);
      }
    }
    if (v < 0) {
      throw new MalformedMessageException("field " + field + ": negative value " + v);
    }
    if (v > max) {
      throw new MalformedMessageException("field " + field + ": value " + v + " exceeds " + max);
    }
    return v;
  }

  /** A bool; nil reads as false. */
  boolean readBool(String field) throws MalformedMessageException, IOException {
    int b = u8();
    return switch (b) {
      case 0xc3 -> true;
      case 0xc2, 0xc0 -> false;
      default -> throw new MalformedMessageException("field " + field + ": expected a bool, found " + describe(b));
    };
  }

  /** Skips one value of any type (an unknown field's value). */
  void skipValue() throws MalformedMessageException, IOException {
    skipValue(0);
  }

  private void skipValue(int depth) throws MalformedMessageException, IOException {
    if (depth > MAX_SKIP_DEPTH) {
      throw new MalformedMessageException("unknown field value nested deeper than " + MAX_SKIP_DEPTH);
    }
    int b = u8();
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
      return;
    }
    long str = strLength(b);
    if (str >= 0) {
      skipRaw(str);
      return;
    }
    if ((b & 0xf0) == 0x80 || b == 0xde || b == 0xdf) {
      long n = (b & 0xf0) == 0x80 ? b & 0x0f : beUint(b == 0xde ? 2 : 4);
      checkCount(n, 2, "skipped map");
      for (long i = 0; i < 2 * n; i++) {
        skipValue(depth + 1);
      }
      return;
    }
    if ((b & 0xf0) == 0x90 || b == 0xdc || b == 0xdd) {
      long n = (b & 0xf0) == 0x90 ? b & 0x0f : beUint(b == 0xdc ? 2 : 4);
      checkCount(n, 1, "skipped array");
      for (long i = 0; i < n; i++) {
        skipValue(depth + 1);
      }
      return;
    }
    switch (b) {
      case 0xc4 -> skipRaw(beUint(1));
      case 0xc5 -> skipRaw(beUint(2));
      case 0xc6 -> skipRaw(beUint(4));
      case 0xc7 -> skipRaw(beUint(1) + 1);
      case 0xc8 -> skipRaw(beUint(2) + 1);
      case 0xc9 -> skipRaw(beUint(4) + 1);
      case 0xca -> skipRaw(4);
      case 0xcb -> skipRaw(8);
      case 0xcc, 0xd0 -> skipRaw(1);
      case 0xcd, 0xd1 -> skipRaw(2);
      case 0xce, 0xd2 -> skipRaw(4);
      case 0xcf, 0xd3 -> skipRaw(8);
      case 0xd4 -> skipRaw(2);
      case 0xd5 -> skipRaw(3);
      case 0xd6 -> skipRaw(5);
      case 0xd7 -> skipRaw(9);
      case 0xd8 -> skipRaw(17);
      default -> throw new MalformedMessageException("invalid msgpack type byte " + describe(b));
    }
  }

  private static String describe(int b) {
    return (b < 0x10 ? "0x0" : "0x") + Integer.toHexString(b);
  }
}
