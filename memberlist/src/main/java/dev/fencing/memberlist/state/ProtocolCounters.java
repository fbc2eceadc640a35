package dev.fencing.memberlist.state;

import java.util.concurrent.atomic.LongAdder;

/** Event counters shared by the protocol and its runtime; safe to update and read from any thread. */
public final class ProtocolCounters {
  public final LongAdder packetsSent = new LongAdder();
  public final LongAdder bytesSent = new LongAdder();
  public final LongAdder packetsReceived = new LongAdder();
  public final LongAdder bytesReceived = new LongAdder();
  public final LongAdder malformedPackets = new LongAdder();
  public final LongAdder probes = new LongAdder();
  public final LongAdder probeFailures = new LongAdder();
  public final LongAdder indirectProbes = new LongAdder();
  public final LongAdder tcpFallbackPings = new LongAdder();
  public final LongAdder suspicionsRaised = new LongAdder();
  public final LongAdder deathsDeclared = new LongAdder();
  public final LongAdder refutations = new LongAdder();
  public final LongAdder pushPulls = new LongAdder();
  public final LongAdder userMessagesReceived = new LongAdder();
  public final LongAdder userMessagesSent = new LongAdder();
}
