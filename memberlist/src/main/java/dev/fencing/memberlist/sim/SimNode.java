package dev.fencing.memberlist.sim;

import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.Node;
import dev.fencing.memberlist.codec.MalformedMessageException;
import dev.fencing.memberlist.codec.Message;
import dev.fencing.memberlist.codec.MessageCodec;
import dev.fencing.memberlist.state.ProtocolCounters;
import dev.fencing.memberlist.state.SwimProtocol;
import dev.fencing.memberlist.state.Timers;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * One simulated member: the real {@link SwimProtocol} on virtual time, plus the faults the simulator can inject into
 * it: a crash (silence), a stall (nothing is processed until it ends, like a long GC pause), and slow message
 * processing (every inbound message waits a random time, Lifeguard's "slow member").
 */
public final class SimNode {
  private final Simulator sim;
  private final int index;
  private final Config config;
  private final InetSocketAddress address;
  private final ProtocolCounters counters = new ProtocolCounters();
  private SwimProtocol protocol;
  private boolean crashed;
  private long stallUntil;
  private long maxProcessingDelayNanos;
  private long crashedAt = -1;

  SimNode(Simulator sim, int index, Config config, InetSocketAddress address) {
    this.sim = sim;
    this.index = index;
    this.config = config;
    this.address = address;
  }

  void attach(SwimProtocol protocol) {
    this.protocol = protocol;
  }

  public String name() {
    return config.name();
  }

  public int index() {
    return index;
  }

  public Config config() {
    return config;
  }

  public InetSocketAddress address() {
    return address;
  }

  /** The protocol state machine (for inspection; drive it only through the simulator). */
  public SwimProtocol protocol() {
    return protocol;
  }

  public ProtocolCounters counters() {
    return counters;
  }

  public boolean crashed() {
    return crashed;
  }

  /** Virtual time of the crash, or -1. */
  public long crashedAt() {
    return crashedAt;
  }

  /** This node's members as it sees them (alive and suspect). */
  public List<Node> members() {
    return protocol.members();
  }

  /** Stops the node dead: no more packets, streams or timers, and nobody is told. */
  public void crash() {
    if (!crashed) {
      crashed = true;
      crashedAt = sim.time().nanos();
      protocol.stop();
    }
  }

  /** Freezes the node for {@code d}: inbound messages and its own timers wait until the stall ends. */
  public void stall(Duration d) {
    stallUntil = Math.max(stallUntil, sim.time().nanos() + d.toNanos());
  }

  /** Every inbound message is processed after a uniform random delay in {@code [0, max]} (ZERO = healthy). */
  public void slowProcessing(Duration max) {
    maxProcessingDelayNanos = max.toNanos();
  }

  public boolean slow() {
    return maxProcessingDelayNanos > 0;
  }

  /** Graceful leave: broadcasts the node's departure (the node keeps running, as in memberlist). */
  public void leave() {
    protocol.leave(() -> {});
  }

  Timers timers() {
    return (delayNanos, task) -> sim.time().schedule(delayNanos, () -> runTimer(task));
  }

  private void runTimer(Runnable task) {
    if (crashed) {
      return;
    }
    long now = sim.time().nanos();
    if (now < stallUntil) {
      sim.time().schedule(stallUntil - now, () -> runTimer(task));
      return;
    }
    task.run();
  }

  /** Runs inbound work now, or later if the node is stalled or slow. */
  void process(Runnable work) {
    if (crashed) {
      return;
    }
    long now = sim.time().nanos();
    long delay = Math.max(0, stallUntil - now);
    if (maxProcessingDelayNanos > 0) {
      delay += sim.random().nextLong(maxProcessingDelayNanos + 1);
    }
    if (delay == 0) {
      work.run();
    } else {
      sim.time().schedule(delay, () -> {
        if (!crashed) {
          work.run();
        }
      });
    }
  }

  void receivePacket(List<byte[]> parts, InetSocketAddress from, int bytes) {
    if (crashed) {
      return;
    }
    counters.packetsReceived.increment();
    counters.bytesReceived.add(bytes);
    process(
        () -> {
          for (byte[] part : parts) {
            Message m;
            try {
              m = MessageCodec.decode(part);
            } catch (MalformedMessageException e) {
              counters.malformedPackets.increment();
              continue;
            }
            protocol.handleMessage(m, from);
          }
        });
  }
}
