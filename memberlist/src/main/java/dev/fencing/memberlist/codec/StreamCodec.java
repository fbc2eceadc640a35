package dev.fencing.memberlist.codec;

import dev.fencing.memberlist.limits.Limit;
import dev.fencing.memberlist.limits.Refusals;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * memberlist's TCP stream format: each connection carries one message each way (request, then reply for ping and
 * push/pull).
 *
 * <p>A message is {@code [type][msgpack body]} for ping (0), ack (2) and err (13); push/pull (6) is a
 * {@code pushPullHeader{Join,Nodes,UserStateLen}}, then {@code Nodes} node states, then the raw user state; a user
 * message (8) is a {@code userMsgHeader{UserMsgLen}} then the raw bytes. The whole message may be LZW-compressed as
 * {@code [9]{Algo,Buf}} and then encrypted as {@code [10][len u32 BE][vsn][nonce][ct+tag]} with the 5-byte header
 * and the label as additional data. The dialer precedes its request with the label header
 * {@code [244][len][label]} when a label is configured; replies carry none.
 *
 * <p>Reading is bounded by {@link WireLimits}, each cap checked before the allocation it guards: an encrypted frame
 * whose header announces more than {@link WireLimits#maxStreamMessageBytes()} is refused from those 5 bytes, a plain
 * or compressed message stops being read at that many bytes, and push/pull node count, push/pull size, user state
 * and LZW output have caps of their own (memberlist HEAD has the same checks with server-sized values; 0.2.2 peers
 * never come near the defaults). A refused message is counted and logged in {@link Refusals}.
 *
 * <p>An encrypted frame must be read whole before it can be authenticated. On an inbound stream it first reserves its
 * announced length from the transport's {@link FrameBudget}, shared by all inbound streams, and is refused from its
 * header when there is no room; only then is one buffer of that length allocated, the frame decrypted in place
 * ({@link Keyring#decryptInPlace}) and decoded, and the room given back. So keyless streams that release the last
 * byte of a 1 MiB frame together hold the budget, not a frame and a plaintext copy each. Thread-safe.
 */
public final class StreamCodec {
  private final PacketOptions options;
  private final WireLimits limits;
  private final Refusals refusals;
  private final byte[] label;

  /** A codec with the default {@link WireLimits} and its own refusal counters. */
  public StreamCodec(PacketOptions options) {
    this(options, WireLimits.defaults(), new Refusals("", System::nanoTime));
  }

  /**
   * @param options keyring, label and verification settings (shared with the node's {@link PacketCodec})
   * @param limits caps on what one stream message may make this node allocate
   * @param refusals where messages refused by a cap are counted and logged (shared with the node's packet codec)
   */
  public StreamCodec(PacketOptions options, WireLimits limits, Refusals refusals) {
    this.options = options;
    this.limits = limits;
    this.refusals = refusals;
    this.label = options.labelBytes();
  }

  /** Writes the label header a dialer sends first on a new connection; nothing when no label is configured. */
  public void writeLabelHeader(OutputStream out) throws IOException {
    if (label.length > 0) {
      out.write(MessageType.HAS_LABEL.code());
      out.write(label.length);
      out.write(label);
    }
  }

  /**
   * Writes one message: compressed if asked, then encrypted when the options say so. Does not write the label
   * header (see {@link #writeLabelHeader}) and does not close or flush-close the stream (it flushes).
   *
   * @param m a {@link Ping}, {@link AckResp}, {@link ErrResp}, {@link PushPull} or {@link UserMsg}
   */
  public void write(OutputStream out, Message m, boolean compress) throws IOException {
    out.write(encode(m, compress));
    out.flush();
  }

  /** The bytes {@link #write} sends. */
  public byte[] encode(Message m, boolean compress) {
    byte[] plain = plainBytes(m);
    if (compress) {
      plain = PacketCodec.compressed(plain);
    }
    if (!options.encrypting()) {
      return plain;
    }
    int version = options.encryptionVersion();
    int encLen = plain.length + Keyring.overhead(version, plain.length);
    byte[] header = new byte[5];
    header[0] = (byte) MessageType.ENCRYPT.code();
    PacketCodec.putU32(header, 1, encLen);
    byte[] sealed = options.keyring().encrypt(version, plain, aad(header));
    byte[] out = Arrays.copyOf(header, 5 + sealed.length);
    System.arraycopy(sealed, 0, out, 5, sealed.length);
    return out;
  }

  private byte[] aad(byte[] header) {
    byte[] aad = Arrays.copyOf(header, header.length + label.length);
    System.arraycopy(label, 0, aad, header.length, label.length);
    return aad;
  }

  /** {@code [type][…]} before compression and encryption. */
  static byte[] plainBytes(Message m) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    out.write(m.type().code());
    MsgpackWriter w = new MsgpackWriter(out);
    if (m instanceof PushPull p) {
      byte[] user = p.userState() == null ? new byte[0] : p.userState();
      w.mapHeader(3).key("Join").bool(p.join()).key("Nodes").uint(p.nodes().size());
      w.key("UserStateLen").uint(user.length);
      for (PushNodeState s : p.nodes()) {
        MessageCodec.writeNodeState(w, s);
      }
      out.write(user, 0, user.length);
    } else if (m instanceof UserMsg u) {
      byte[] payload = u.payload() == null ? new byte[0] : u.payload();
      w.mapHeader(1).key("UserMsgLen").uint(payload.length);
      out.write(payload, 0, payload.length);
    } else if (m instanceof Ping || m instanceof AckResp || m instanceof ErrResp) {
      MessageCodec.writeBody(w, m);
    } else {
      throw new IllegalArgumentException(m.type() + " is not sent on streams");
    }
    return out.toByteArray();
  }

  /**
   * Reads the request on an accepted connection: checks the dialer's label header (required when this node has a
   * label, refused when it has none; with {@link PacketOptions#skipInboundLabelCheck()} always refused and the
   * configured label assumed), then reads one message as {@link #read} does.
   */
  public Message readInbound(InputStream in) throws MalformedMessageException, IOException {
    return readInbound(in, FrameBudget.UNLIMITED);
  }

  /**
   * As {@link #readInbound(InputStream)}, reserving room for an encrypted frame from {@code budget} before reading it
   * (refused with {@link LimitExceededException} for {@link Limit#INBOUND_FRAME_BYTES} when there is none).
   */
  public Message readInbound(InputStream in, FrameBudget budget) throws MalformedMessageException, IOException {
    InputStream buffered = buffered(in);
    int first = readByte(buffered);
    if (first == MessageType.HAS_LABEL.code()) {
      int len = readByte(buffered);
      if (len == 0) {
        throw new MalformedMessageException("stream label header with an empty label");
      }
      if (options.skipInboundLabelCheck()) {
        throw new MalformedMessageException(
            "stream carries a label header but inbound label checks are skipped (double label)");
      }
      byte[] got = buffered.readNBytes(len);
      if (got.length < len) {
        throw new EOFException("stream ended inside the label header");
      }
      if (!Arrays.equals(got, label)) {
        throw new MalformedMessageException(
            label.length == 0
                ? "stream carries a label but this node has none configured"
                : "stream label does not match this node's label");
      }
      first = readByte(buffered);
    } else if (label.length > 0 && !options.skipInboundLabelCheck()) {
      throw new MalformedMessageException("stream has no label header but this node requires its label");
    }
    return read(buffered, first, budget);
  }

  /**
   * Reads one message with no label header (a reply, or a request when labels are handled elsewhere). Accepts
   * plain, compressed and encrypted forms; an unencrypted message is refused when a keyring is set and incoming
   * verification is on.
   *
   * @throws EOFException if the stream ends early
   */
  public Message read(InputStream in) throws MalformedMessageException, IOException {
    InputStream buffered = buffered(in);
    return read(buffered, readByte(buffered), FrameBudget.UNLIMITED);
  }

  private Message read(InputStream in, int type, FrameBudget budget) throws MalformedMessageException, IOException {
    try {
      return readMessage(in, type, budget);
    } catch (LimitExceededException e) {
      refusals.refused(e.limit(), e.getMessage());
      throw e;
    }
  }

  private Message readMessage(InputStream in, int type, FrameBudget budget)
      throws MalformedMessageException, IOException {
    if (type == MessageType.ENCRYPT.code()) {
      if (options.keyring() == null) {
        throw new MalformedMessageException("remote stream is encrypted and encryption is not configured");
      }
      byte[] header = new byte[5];
      header[0] = (byte) type;
      if (in.readNBytes(header, 1, 4) < 4) {
        throw new EOFException("stream ended inside the encryption header");
      }
      long len = PacketCodec.getU32(header, 1);
      if (len > limits.maxStreamMessageBytes()) {
        throw new LimitExceededException(
            Limit.STREAM_MESSAGE_BYTES,
            "encrypted stream frame announces " + len + " bytes, over " + limits.maxStreamMessageBytes());
      }
      return readSealed(in, header, (int) len, budget);
    }
    if (options.keyring() != null && options.verifyIncoming()) {
      throw new MalformedMessageException("encryption is configured but the remote stream is not encrypted");
    }
    if (type == MessageType.COMPRESS.code()) {
      DecodeBudget decode = new DecodeBudget(limits);
      byte[] data = PacketCodec.inflate(MsgpackReader.of(in, limits.maxStreamMessageBytes()), decode);
      return readPlain(data, 0, data.length, decode);
    }
    return readBody(type, MsgpackReader.of(in, limits.maxStreamMessageBytes()));
  }

  /** Reads, decrypts in place and decodes an encrypted frame of {@code len} bytes within room taken from budget. */
  private Message readSealed(InputStream in, byte[] header, int len, FrameBudget budget)
      throws MalformedMessageException, IOException {
    if (!budget.tryReserve(len)) {
      throw new LimitExceededException(
          Limit.INBOUND_FRAME_BYTES,
          "encrypted stream frame of " + len + " bytes refused from its header: no room left for it among the"
              + " inbound frames held at once");
    }
    try {
      byte[] frame = new byte[len];
      if (in.readNBytes(frame, 0, len) < len) {
        throw new EOFException("stream ended inside an encrypted frame of " + len + " bytes");
      }
      int n = options.keyring().decryptInPlace(frame, 0, len, aad(header));
      return readPlain(frame, Keyring.PLAINTEXT_OFFSET, Keyring.PLAINTEXT_OFFSET + n, new DecodeBudget(limits));
    } finally {
      budget.release(len);
    }
  }

  /** Decodes {@code [type][…]} or {@code [9]{compress}} held in {@code buf[from..to)} (after decryption). */
  private Message readPlain(byte[] buf, int from, int to, DecodeBudget budget)
      throws MalformedMessageException, IOException {
    if (to <= from) {
      throw new MalformedMessageException("empty stream message");
    }
    int type = buf[from] & 0xff;
    if (type == MessageType.COMPRESS.code()) {
      byte[] plain = PacketCodec.inflate(MsgpackReader.of(buf, from + 1, to), budget);
      type = plain[0] & 0xff;
      return readBody(type, MsgpackReader.of(plain, 1, plain.length));
    }
    return readBody(type, MsgpackReader.of(buf, from + 1, to));
  }

  private Message readBody(int code, MsgpackReader r) throws MalformedMessageException, IOException {
    MessageType type = MessageType.fromCode(code);
    if (type == null) {
      throw new MalformedMessageException("invalid stream message type " + code);
    }
    switch (type) {
      case PING, ACK_RESP, ERR:
        return MessageCodec.readBody(type, r);
      case USER:
        return readUser(r);
      case PUSH_PULL:
        return readPushPull(r);
      default:
        throw new MalformedMessageException("invalid stream message type " + code + " (" + type + ")");
    }
  }

  private UserMsg readUser(MsgpackReader r) throws MalformedMessageException, IOException {
    int n = r.readMapHeader("user message header");
    long len = 0;
    for (int i = 0; i < n; i++) {
      if (r.readKey("user message header").equals("UserMsgLen")) {
        len = r.readUint(Long.MAX_VALUE, "UserMsgLen");
      } else {
        r.skipValue();
      }
    }
    if (len > limits.maxUserStateBytes()) {
      throw new LimitExceededException(
          Limit.USER_STATE_BYTES,
          "reliable user message of " + len + " bytes, over " + limits.maxUserStateBytes());
    }
    return new UserMsg(r.readRaw(len, "user message"));
  }

  private PushPull readPushPull(MsgpackReader r) throws MalformedMessageException, IOException {
    r.restrict(limits.maxPushPullStateBytes(), Limit.PUSH_PULL_STATE_BYTES, "push/pull");
    int n = r.readMapHeader("push/pull header");
    boolean join = false;
    long nodes = 0;
    long userLen = 0;
    for (int i = 0; i < n; i++) {
      switch (r.readKey("push/pull header")) {
        case "Join" -> join = r.readBool("Join");
        case "Nodes" -> nodes = r.readUint(Long.MAX_VALUE, "Nodes");
        case "UserStateLen" -> userLen = r.readUint(Long.MAX_VALUE, "UserStateLen");
        default -> r.skipValue();
      }
    }
    if (nodes > limits.maxPushPullNodes()) {
      throw new LimitExceededException(
          Limit.PUSH_PULL_NODES, "push/pull declares " + nodes + " nodes, over " + limits.maxPushPullNodes());
    }
    if (userLen > limits.maxUserStateBytes()) {
      throw new LimitExceededException(
          Limit.USER_STATE_BYTES,
          "push/pull user state of " + userLen + " bytes, over " + limits.maxUserStateBytes());
    }
    List<PushNodeState> states = new ArrayList<>();
    for (long i = 0; i < nodes; i++) {
      states.add(MessageCodec.readNodeState(r));
    }
    return new PushPull(join, states, r.readRaw(userLen, "push/pull user state"));
  }

  private static InputStream buffered(InputStream in) {
    return in instanceof BufferedInputStream || in instanceof java.io.ByteArrayInputStream
        ? in
        : new BufferedInputStream(in, 8192);
  }

  private static int readByte(InputStream in) throws IOException {
    int b = in.read();
    if (b < 0) {
      throw new EOFException("stream ended before a message");
    }
    return b;
  }
}
