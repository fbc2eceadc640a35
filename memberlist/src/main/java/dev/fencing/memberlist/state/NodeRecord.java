package dev.fencing.memberlist.state;

import dev.fencing.memberlist.Node;
import dev.fencing.memberlist.NodeState;
import dev.fencing.memberlist.codec.PushNodeState;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** The protocol's mutable view of one member; confined to the protocol (never handed out, see {@link #toNode()}). */
public final class NodeRecord {
  private final String name;
  private byte[] addr;
  private int port;
  private InetSocketAddress address;
  private byte[] meta;
  private byte[] vsn;
  private long incarnation;
  private NodeState state;
  private long stateChangeNanos;

  NodeRecord(String name, byte[] addr, int port, byte[] meta, byte[] vsn, NodeState state, long nowNanos) {
    this.name = name;
    setAddress(addr, port);
    this.meta = meta == null ? new byte[0] : meta;
    this.vsn = vsn == null || vsn.length < 6 ? new byte[6] : vsn;
    this.state = state;
    this.stateChangeNanos = nowNanos;
  }

  public String name() {
    return name;
  }

  byte[] addr() {
    return addr;
  }

  int port() {
    return port;
  }

  /** Where the node receives packets and streams. */
  public InetSocketAddress address() {
    return address;
  }

  void setAddress(byte[] addr, int port) {
    this.addr = addr;
    this.port = port;
    this.address = toSocketAddress(addr, port);
  }

  byte[] meta() {
    return meta;
  }

  void setMeta(byte[] meta) {
    this.meta = meta == null ? new byte[0] : meta;
  }

  byte[] vsn() {
    return vsn;
  }

  void setVsn(byte[] vsn) {
    if (vsn != null && vsn.length >= 6) {
      this.vsn = vsn;
    }
  }

  /** Highest protocol version the node speaks (gates nacks, TCP pings and CRC). */
  public int pMax() {
    return vsn[1] & 0xff;
  }

  public long incarnation() {
    return incarnation;
  }

  void setIncarnation(long incarnation) {
    this.incarnation = incarnation;
  }

  public NodeState state() {
    return state;
  }

  long stateChangeNanos() {
    return stateChangeNanos;
  }

  void setState(NodeState state, long nowNanos) {
    this.state = state;
    this.stateChangeNanos = nowNanos;
  }

  /** An immutable snapshot for the public API and delegates. */
  public Node toNode() {
    return new Node(
        name,
        address,
        meta,
        state,
        incarnation,
        vsn[0] & 0xff,
        vsn[1] & 0xff,
        vsn[2] & 0xff,
        vsn[3] & 0xff,
        vsn[4] & 0xff,
        vsn[5] & 0xff);
  }

  PushNodeState toPushNodeState() {
    return new PushNodeState(name, addr, port, meta.length == 0 ? null : meta, incarnation, state.wireValue(), vsn);
  }

  static InetSocketAddress toSocketAddress(byte[] addr, int port) {
    try {
      return new InetSocketAddress(InetAddress.getByAddress(addr), port);
    } catch (UnknownHostException e) {
      // Only a wrong-length address gets here; keep the node but make it unreachable rather than failing the protocol.
      return InetSocketAddress.createUnresolved("invalid-address", port);
    }
  }
}
