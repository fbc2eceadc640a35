package dev.fencing.memberlist.codec;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The subset of msgpack that Go's go-msgpack {@code MsgpackHandle{}} emits for memberlist's structs: the "old spec"
 * family, where strings and byte slices are both raw strings (fixstr, str16, str32, never str8 or bin), nil byte
 * slices are nil, and non-negative integers take the smallest unsigned form. Writing exactly this keeps our bytes
 * identical to the Go peer's.
 */
final class MsgpackWriter {
  private final ByteArrayOutputStream out;

  MsgpackWriter(ByteArrayOutputStream out) {
    this.out = out;
  }

  MsgpackWriter mapHeader(int n) {
    if (n < 16) {
      out.write(0x80 | n);
    } else if (n < 0x10000) {
      out.write(0xde);
      u16(n);
    } else {
      out.write(0xdf);
      u32(n);
    }
    return this;
  }

  /** A map key: always a str (Go struct field name). */
  MsgpackWriter key(String name) {
    return str(name);
  }

  /** A Go string; null is written as "" because Go strings cannot be nil. */
  MsgpackWriter str(String s) {
    byte[] b = s == null ? new byte[0] : s.getBytes(StandardCharsets.UTF_8);
    rawHeader(b.length);
    out.write(b, 0, b.length);
    return this;
  }

  /** A Go []byte: nil when null, otherwise a raw string (the pre-bin msgpack spec go-msgpack uses by default). */
  MsgpackWriter bytes(byte[] b) {
    if (b == null) {
      out.write(0xc0);
      return this;
    }
    rawHeader(b.length);
    out.write(b, 0, b.length);
    return this;
  }

  MsgpackWriter bool(boolean v) {
    out.write(v ? 0xc3 : 0xc2);
    return this;
  }

  /** A non-negative integer in its smallest unsigned form, as go-msgpack writes both ints ≥ 0 and uints. */
  MsgpackWriter uint(long v) {
    if (v < 0) {
      throw new IllegalArgumentException("negative value " + v + " for an unsigned field");
    }
    if (v <= 0x7f) {
      out.write((int) v);
    } else if (v <= 0xff) {
      out.write(0xcc);
      out.write((int) v);
    } else if (v <= 0xffff) {
      out.write(0xcd);
      u16((int) v);
    } else if (v <= 0xffffffffL) {
      out.write(0xce);
      u32(v);
    } else {
      out.write(0xcf);
      u32(v >>> 32);
      u32(v & 0xffffffffL);
    }
    return this;
  }

  private void rawHeader(int n) {
    if (n < 32) {
      out.write(0xa0 | n);
    } else if (n < 0x10000) {
      out.write(0xda);
      u16(n);
    } else {
      out.write(0xdb);
      u32(n);
    }
  }

  private void u16(int v) {
    out.write((v >>> 8) & 0xff);
    out.write(v & 0xff);
  }

  private void u32(long v) {
    out.write((int) (v >>> 24) & 0xff);
    out.write((int) (v >>> 16) & 0xff);
    out.write((int) (v >>> 8) & 0xff);
    out.write((int) v & 0xff);
  }
}
