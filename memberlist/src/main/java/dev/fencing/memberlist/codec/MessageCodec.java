package dev.fencing.memberlist.codec;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Arrays;

/**
 * One memberlist message ⇄ bytes: the type byte followed by the msgpack body, byte-identical to Go memberlist
 * (go-msgpack {@code MsgpackHandle{}}: map keyed by Go field name in sorted order, raw strings for strings and
 * byte slices, nil for absent byte slices, {@code omitempty} source fields dropped, minimal unsigned integers).
 *
 * <p>Packet layers (compound, compress, CRC, encryption, label) are {@link PacketCodec}'s job; the stream forms of
 * push/pull and user messages are {@link StreamCodec}'s.
 */
public final class MessageCodec {
  static final long MAX_UINT32 = 0xffffffffL;
  static final long MAX_UINT16 = 0xffff;

  private MessageCodec() {}

  /**
   * Encodes a single message for a packet. A {@link UserMsg} becomes {@code [8][raw payload]}.
   *
   * @throws IllegalArgumentException for {@link PushPull}, which only exists on streams
   */
  public static byte[] encode(Message m) {
    if (m instanceof PushPull) {
      throw new IllegalArgumentException("push/pull is a stream-only message; use StreamCodec");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(64);
    out.write(m.type().code());
    if (m instanceof UserMsg u) {
      byte[] p = u.payload() == null ? new byte[0] : u.payload();
      out.write(p, 0, p.length);
    } else {
      writeBody(new MsgpackWriter(out), m);
    }
    return out.toByteArray();
  }

  /**
   * Decodes a single message (type byte + body) as found in a packet or a compound part. Lenient about msgpack
   * representation, strict about structure; never throws an unchecked exception on bad input.
   *
   * @throws MalformedMessageException if the bytes are not one of the single-message types or do not parse
   */
  public static Message decode(byte[] buf) throws MalformedMessageException {
    if (buf == null || buf.length == 0) {
      throw new MalformedMessageException("empty message");
    }
    int code = buf[0] & 0xff;
    MessageType type = MessageType.fromCode(code);
    if (type == null) {
      throw new MalformedMessageException("message type " + code + " not supported");
    }
    switch (type) {
      case USER:
        return new UserMsg(Arrays.copyOfRange(buf, 1, buf.length));
      case PUSH_PULL:
        throw new MalformedMessageException("push/pull (type 6) is only valid on a stream");
      case COMPOUND, COMPRESS, ENCRYPT, HAS_CRC, HAS_LABEL:
        throw new MalformedMessageException(
            "type " + code + " is a packet layer, not a single message; decode it with PacketCodec");
      default:
        break;
    }
    try {
      return readBody(type, MsgpackReader.of(buf, 1, buf.length));
    } catch (IOException e) {
      throw new MalformedMessageException("unexpected read failure: " + e.getMessage(), e);
    }
  }

  /** Writes the msgpack body of a single (non-user, non-push/pull) message. */
  static void writeBody(MsgpackWriter w, Message m) {
    if (m instanceof Ping p) {
      boolean addr = p.sourceAddr() != null && p.sourceAddr().length > 0;
      boolean node = p.sourceNode() != null && !p.sourceNode().isEmpty();
      boolean port = p.sourcePort() != 0;
      w.mapHeader(2 + (addr ? 1 : 0) + (node ? 1 : 0) + (port ? 1 : 0));
      w.key("Node").str(p.node());
      w.key("SeqNo").uint(p.seqNo());
      if (addr) {
        w.key("SourceAddr").bytes(p.sourceAddr());
      }
      if (node) {
        w.key("SourceNode").str(p.sourceNode());
      }
      if (port) {
        w.key("SourcePort").uint(p.sourcePort());
      }
    } else if (m instanceof IndirectPingReq r) {
      boolean addr = r.sourceAddr() != null && r.sourceAddr().length > 0;
      boolean node = r.sourceNode() != null && !r.sourceNode().isEmpty();
      boolean port = r.sourcePort() != 0;
      w.mapHeader(5 + (addr ? 1 : 0) + (node ? 1 : 0) + (port ? 1 : 0));
      w.key("Nack").bool(r.nack());
      w.key("Node").str(r.node());
      w.key("Port").uint(r.port());
      w.key("SeqNo").uint(r.seqNo());
      if (addr) {
        w.key("SourceAddr").bytes(r.sourceAddr());
      }
      if (node) {
        w.key("SourceNode").str(r.sourceNode());
      }
      if (port) {
        w.key("SourcePort").uint(r.sourcePort());
      }
      w.key("Target").bytes(r.target());
    } else if (m instanceof AckResp a) {
      w.mapHeader(2).key("Payload").bytes(a.payload()).key("SeqNo").uint(a.seqNo());
    } else if (m instanceof NackResp n) {
      w.mapHeader(1).key("SeqNo").uint(n.seqNo());
    } else if (m instanceof ErrResp e) {
      w.mapHeader(1).key("Error").str(e.error());
    } else if (m instanceof Suspect s) {
      w.mapHeader(3).key("From").str(s.from()).key("Incarnation").uint(s.incarnation()).key("Node").str(s.node());
    } else if (m instanceof Dead d) {
      w.mapHeader(3).key("From").str(d.from()).key("Incarnation").uint(d.incarnation()).key("Node").str(d.node());
    } else if (m instanceof Alive a) {
      w.mapHeader(6);
      w.key("Addr").bytes(a.addr());
      w.key("Incarnation").uint(a.incarnation());
      w.key("Meta").bytes(a.meta());
      w.key("Node").str(a.node());
      w.key("Port").uint(a.port());
      w.key("Vsn").bytes(a.vsn());
    } else {
      throw new IllegalArgumentException(m.type() + " has no single msgpack body");
    }
  }

  /** Writes one push/pull node entry ({@code pushNodeState}). */
  static void writeNodeState(MsgpackWriter w, PushNodeState s) {
    w.mapHeader(7);
    w.key("Addr").bytes(s.addr());
    w.key("Incarnation").uint(s.incarnation());
    w.key("Meta").bytes(s.meta());
    w.key("Name").str(s.name());
    w.key("Port").uint(s.port());
    w.key("State").uint(s.state());
    w.key("Vsn").bytes(s.vsn());
  }

  /** Reads the msgpack body of a single message of {@code type}. */
  static Message readBody(MessageType type, MsgpackReader r) throws MalformedMessageException, IOException {
    String what = type.name().toLowerCase() + " message";
    int n = r.readMapHeader(what);
    switch (type) {
      case PING: {
        long seqNo = 0;
        int sourcePort = 0;
        String node = "";
        String sourceNode = null;
        byte[] sourceAddr = null;
        for (int i = 0; i < n; i++) {
          switch (r.readKey(what)) {
            case "SeqNo" -> seqNo = r.readUint(MAX_UINT32, "SeqNo");
            case "Node" -> node = r.readString("Node");
            case "SourceAddr" -> sourceAddr = r.readBytes("SourceAddr");
            case "SourcePort" -> sourcePort = (int) r.readUint(MAX_UINT16, "SourcePort");
            case "SourceNode" -> sourceNode = r.readString("SourceNode");
            default -> r.skipValue();
          }
        }
        return new Ping(seqNo, node, sourceAddr, sourcePort, sourceNode);
      }
      case INDIRECT_PING: {
        long seqNo = 0;
        int port = 0;
        int sourcePort = 0;
        boolean nack = false;
        String node = "";
        String sourceNode = null;
        byte[] target = null;
        byte[] sourceAddr = null;
        for (int i = 0; i < n; i++) {
          switch (r.readKey(what)) {
            case "SeqNo" -> seqNo = r.readUint(MAX_UINT32, "SeqNo");
            case "Target" -> target = r.readBytes("Target");
            case "Port" -> port = (int) r.readUint(MAX_UINT16, "Port");
            case "Node" -> node = r.readString("Node");
            case "Nack" -> nack = r.readBool("Nack");
            case "SourceAddr" -> sourceAddr = r.readBytes("SourceAddr");
            case "SourcePort" -> sourcePort = (int) r.readUint(MAX_UINT16, "SourcePort");
            case "SourceNode" -> sourceNode = r.readString("SourceNode");
            default -> r.skipValue();
          }
        }
        return new IndirectPingReq(seqNo, target, port, node, nack, sourceAddr, sourcePort, sourceNode);
      }
      case ACK_RESP: {
        long seqNo = 0;
        byte[] payload = null;
        for (int i = 0; i < n; i++) {
          switch (r.readKey(what)) {
            case "SeqNo" -> seqNo = r.readUint(MAX_UINT32, "SeqNo");
            case "Payload" -> payload = r.readBytes("Payload");
            default -> r.skipValue();
          }
        }
        return new AckResp(seqNo, payload);
      }
      case NACK_RESP: {
        long seqNo = 0;
        for (int i = 0; i < n; i++) {
          if (r.readKey(what).equals("SeqNo")) {
            seqNo = r.readUint(MAX_UINT32, "SeqNo");
          } else {
            r.skipValue();
          }
        }
        return new NackResp(seqNo);
      }
      case ERR: {
        String error = "";
        for (int i = 0; i < n; i++) {
          if (r.readKey(what).equals("Error")) {
            error = r.readString("Error");
          } else {
            r.skipValue();
          }
        }
        return new ErrResp(error);
      }
      case SUSPECT, DEAD: {
        long incarnation = 0;
        String node = "";
        String from = "";
        for (int i = 0; i < n; i++) {
          switch (r.readKey(what)) {
            case "Incarnation" -> incarnation = r.readUint(MAX_UINT32, "Incarnation");
            case "Node" -> node = r.readString("Node");
            case "From" -> from = r.readString("From");
            default -> r.skipValue();
          }
        }
        return type == MessageType.SUSPECT
            ? new Suspect(incarnation, node, from)
            : new Dead(incarnation, node, from);
      }
      case ALIVE: {
        long incarnation = 0;
        String node = "";
        byte[] addr = null;
        int port = 0;
        byte[] meta = null;
        byte[] vsn = null;
        for (int i = 0; i < n; i++) {
          switch (r.readKey(what)) {
            case "Incarnation" -> incarnation = r.readUint(MAX_UINT32, "Incarnation");
            case "Node" -> node = r.readString("Node");
            case "Addr" -> addr = r.readBytes("Addr");
            case "Port" -> port = (int) r.readUint(MAX_UINT16, "Port");
            case "Meta" -> meta = r.readBytes("Meta");
            case "Vsn" -> vsn = r.readBytes("Vsn");
            default -> r.skipValue();
          }
        }
        return new Alive(incarnation, node, addr, port, meta, vsn);
      }
      default:
        throw new MalformedMessageException("type " + type.code() + " has no single-message body");
    }
  }

  /** Reads one push/pull node entry ({@code pushNodeState}). */
  static PushNodeState readNodeState(MsgpackReader r) throws MalformedMessageException, IOException {
    String what = "push/pull node state";
    int n = r.readMapHeader(what);
    String name = "";
    byte[] addr = null;
    int port = 0;
    byte[] meta = null;
    long incarnation = 0;
    int state = 0;
    byte[] vsn = null;
    for (int i = 0; i < n; i++) {
      switch (r.readKey(what)) {
        case "Name" -> name = r.readString("Name");
        case "Addr" -> addr = r.readBytes("Addr");
        case "Port" -> port = (int) r.readUint(MAX_UINT16, "Port");
        case "Meta" -> meta = r.readBytes("Meta");
        case "Incarnation" -> incarnation = r.readUint(MAX_UINT32, "Incarnation");
        case "State" -> state = (int) r.readUint(Integer.MAX_VALUE, "State");
        case "Vsn" -> vsn = r.readBytes("Vsn");
        default -> r.skipValue();
      }
    }
    return new PushNodeState(name, addr, port, meta, incarnation, state, vsn);
  }
}
