/**
 * memberlist's wire format, byte-identical to Go memberlist (0.2.2 and current releases).
 *
 * <ul>
 *   <li>{@link dev.fencing.memberlist.codec.Message} records, one per Go message struct, and
 *       {@link dev.fencing.memberlist.codec.MessageCodec} for one message ⇄ {@code [type][msgpack]};
 *   <li>{@link dev.fencing.memberlist.codec.PacketCodec}: the UDP layers, outermost first
 *       {@code [244 label][AES-GCM][12 crc][9 compress[7 compound[…]]]};
 *   <li>{@link dev.fencing.memberlist.codec.StreamCodec}: one message per TCP connection (push/pull, user, ping/ack,
 *       err), optionally compressed and encrypted, with the dialer's label header;
 *   <li>{@link dev.fencing.memberlist.codec.Lzw} (Go {@code compress/lzw}, LSB, 8-bit literals) and
 *       {@link dev.fencing.memberlist.codec.Keyring} (AES-GCM keys with install / use / remove).
 * </ul>
 *
 * <p>Decoders accept what Go accepts (any key order, unknown keys, bin/str/array for bytes, any integer width),
 * check every declared length before allocating, and report bad input only as
 * {@link dev.fencing.memberlist.codec.MalformedMessageException}. The golden tests compare against a Go program
 * built on Debian's memberlist during the build (src/test/go/golden).
 */
package dev.fencing.memberlist.codec;
