package dev.fencing.memberlist;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Objects;

/**
 * An immutable snapshot of one member: name, address, application metadata, state, incarnation and the protocol and
 * delegate version ranges it announced.
 *
 * @param name unique node name
 * @param address where it receives UDP and TCP
 * @param meta application metadata (≤ 512 bytes); a copy is returned
 * @param state alive, suspect, dead or left
 * @param incarnation its incarnation number (uint32)
 * @param pMin lowest protocol version it speaks
 * @param pMax highest protocol version it speaks
 * @param pCur protocol version it uses
 * @param dMin lowest delegate version
 * @param dMax highest delegate version
 * @param dCur delegate version it uses
 */
public record Node(
    String name,
    InetSocketAddress address,
    byte[] meta,
    NodeState state,
    long incarnation,
    int pMin,
    int pMax,
    int pCur,
    int dMin,
    int dMax,
    int dCur) {

  public Node {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(state, "state");
    meta = meta == null ? new byte[0] : meta.clone();
  }

  @Override
  public byte[] meta() {
    return meta.clone();
  }

  /** "ip:port" of {@link #address()}. */
  public String hostPort() {
    return address.getAddress().getHostAddress() + ":" + address.getPort();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Node other
        && name.equals(other.name)
        && address.equals(other.address)
        && Arrays.equals(meta, other.meta)
        && state == other.state
        && incarnation == other.incarnation
        && pMin == other.pMin
        && pMax == other.pMax
        && pCur == other.pCur
        && dMin == other.dMin
        && dMax == other.dMax
        && dCur == other.dCur;
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, address, state, incarnation) * 31 + Arrays.hashCode(meta);
  }

  @Override
  public String toString() {
    return "Node[name=" + name + ", address=" + hostPort() + ", state=" + state + ", incarnation=" + incarnation + "]";
  }
}
