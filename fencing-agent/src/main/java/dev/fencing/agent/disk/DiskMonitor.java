package dev.fencing.agent.disk;

import dev.fencing.agent.quorum.MonotonicClock;
import java.io.IOException;
import java.util.Optional;
import java.util.SortedSet;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The disk thread's loop and what it publishes. All I/O happens in {@link #run}, on one dedicated thread; everyone
 * else only reads the latest published {@link DiskState} and the instant the current I/O began, so a hung device
 * never blocks the quorum loop or the feeder: a read or write pending longer than the I/O timeout counts as disk lost
 * ({@link #condition}) while the thread stays blocked in the kernel.
 */
public final class DiskMonitor {

  private static final Logger LOG = LoggerFactory.getLogger(DiskMonitor.class);
  private static final long IDLE = Long.MIN_VALUE;

  /** Opens the device; called on the disk thread (opening can hang too). */
  @FunctionalInterface
  public interface DeviceOpener {
    BlockDevice open() throws IOException;
  }

  private final DeviceOpener opener;
  private final String deviceName;
  private volatile DiskTiming timing;
  private final MonotonicClock clock;
  private final Supplier<LocalView> local;
  private final String logContext;

  private final DiskArbiter arbiter;
  private final MsgwaitCheck msgwait;
  private volatile DiskState published;
  private volatile String ioMode = "not opened";
  // The open device's io mode while its reads may come from this host's page cache; empty while they do not.
  private volatile Optional<String> notCoherent = Optional.empty();
  private volatile long lastWriteNanos = -1;
  private volatile long ioSinceNanos = IDLE;
  private volatile DiskArbiter.TieRequest tieRequest;
  private volatile long cycles;
  private volatile Thread diskThread;

  /**
   * @param opener opens the device (O_DIRECT in production)
   * @param deviceName for status and logs
   * @param self this node's member name
   * @param timing interval and I/O timeout
   * @param clock this node's monotonic clock
   * @param local the quorum loop's latest view
   * @param logContext {@code node=… group=…}
   */
  public DiskMonitor(DeviceOpener opener, String deviceName, String self, DiskTiming timing, MonotonicClock clock,
      Supplier<LocalView> local, String logContext) {
    this.opener = opener;
    this.deviceName = deviceName;
    this.timing = timing;
    this.clock = clock;
    this.local = local;
    this.logContext = logContext;
    this.arbiter = new DiskArbiter(self, timing, logContext);
    this.msgwait = new MsgwaitCheck(deviceName, logContext);
    this.published = arbiter.state();
  }

  /** The device path. */
  public String deviceName() {
    return deviceName;
  }

  /** The timing in use. */
  public DiskTiming timing() {
    return timing;
  }

  /**
   * New interval and I/O timeout from the next cycle on, without a restart: a new disk thread would know nothing
   * until its first full read (and no slot until it allocated one), which with {@code required} is a lost disk and
   * would fence every armed node of the group at once.
   */
  public void retime(DiskTiming newTiming) {
    arbiter.retime(newTiming);
    this.timing = newTiming;
  }

  /**
   * The header's msgwait against what this node needs to be reset after a poison pill: fed every header read here,
   * told the need by whoever knows the group's timings. A warning only, never part of {@link #lostReason}.
   */
  public MsgwaitCheck msgwait() {
    return msgwait;
  }

  /**
   * Why nothing that compares nodes may be decided on this disk, while the open device's reads may come from this
   * host's page cache ({@link BlockDevice#coherentAcrossHosts()}): a stale read shows the other side's claim or slot
   * going stale, so both sides of a partition could win the tie, and cut-off evidence would rest on old views. Empty
   * while reads come from the device, and before the first open (nothing is read yet then).
   */
  public Optional<String> notCoherentReason() {
    return notCoherent.map(mode -> mode + "; reads may come from this host's page cache, so the disk breaks no ties"
        + " and gives no cut-off evidence");
  }

  /** The latest published state (never blocks). */
  public DiskState state() {
    return published;
  }

  /** How the device is opened: "O_DIRECT", "O_DSYNC (why)" or "not opened". */
  public String ioMode() {
    return ioMode;
  }

  /** Duration of the latest slot write in nanoseconds, -1 before the first. */
  public long lastWriteNanos() {
    return lastWriteNanos;
  }

  /** Completed cycles (read + write), for tests and metrics. */
  public long cycles() {
    return cycles;
  }

  /** Asks the disk thread to claim (or keep claiming) the tie for {@code side}; renewed every evaluation tick. */
  public void requestTie(SortedSet<String> side, long nowNanos) {
    DiskArbiter.TieRequest previous = tieRequest;
    tieRequest = new DiskArbiter.TieRequest(side, nowNanos);
    Thread t = diskThread;
    if (t != null && (previous == null || !previous.side().equals(side))) {
      // a new claim: write it now rather than up to one interval later (the tie is due within tieBreakLead)
      LockSupport.unpark(t);
    }
  }

  /**
   * Whether the disk is usable at {@code nowNanos}: empty when it is, else why not (hung I/O, a failure, no
   * successful read within the I/O timeout plus one interval).
   */
  public Optional<String> lostReason(long nowNanos) {
    long since = ioSinceNanos;
    if (since != IDLE && nowNanos - since > timing.ioTimeout().toNanos()) {
      return Optional.of("I/O pending for " + (nowNanos - since) / 1_000_000 + "ms (ioTimeout "
          + timing.ioTimeout().toMillis() + "ms)");
    }
    DiskState s = published;
    if (s.problem().isPresent()) {
      return s.problem();
    }
    if (!s.lastGoodReadNanos().present()) {
      return Optional.of("not read yet");
    }
    long age = nowNanos - s.lastGoodReadNanos().nanos();
    if (age > timing.ioTimeout().toNanos() + timing.interval().toNanos()) {
      return Optional.of("no successful read for " + age / 1_000_000 + "ms");
    }
    if (s.slot().isEmpty()) {
      return Optional.of("no slot allocated yet");
    }
    return Optional.empty();
  }

  /**
   * The disk condition for status and reports: "ok", "ok, but msgwait … is shorter …" (see {@link MsgwaitCheck}),
   * "allocating a slot", "unreadable: …", "not coherent: …" ({@link #notCoherentReason}) or "poison pill: reset from
   * …".
   */
  public String condition(long nowNanos) {
    DiskState s = published;
    if (s.poisonPill().isPresent()) {
      return "poison pill: " + s.poisonPill().get();
    }
    if (s.problem().isEmpty() && s.lastGoodReadNanos().present() && s.slot().isEmpty()) {
      return "allocating a slot";
    }
    Optional<String> lost = lostReason(nowNanos);
    if (lost.isPresent()) {
      return "unreadable: " + lost.get();
    }
    Optional<String> incoherent = notCoherentReason();
    return incoherent.isPresent() ? "not coherent: " + incoherent.get() : msgwait.conditionWhenUsable();
  }

  /** The cut-off evidence at {@code nowNanos}, only while the disk is usable and its reads come from the device. */
  public Optional<String> cutOff(long nowNanos) {
    return lostReason(nowNanos).isPresent() || notCoherent.isPresent() ? Optional.empty() : published.cutOff();
  }

  /** The disk thread's loop: one cycle per interval until {@code running} turns false. */
  public void run(BooleanSupplier running) {
    diskThread = Thread.currentThread();
    BlockDevice device = null;
    long next = clock.nanoTime();
    while (running.getAsBoolean()) {
      try {
        if (device == null) {
          ioSinceNanos = clock.nanoTime();
          device = opener.open();
          ioSinceNanos = IDLE;
          ioMode = device.ioMode();
          notCoherent = device.coherentAcrossHosts() ? Optional.empty() : Optional.of(device.ioMode());
          LOG.info("{} event=disk_opened device={} io=\"{}\" sector_size={}", logContext, deviceName,
              device.ioMode(), device.sectorSize());
          if (notCoherent.isPresent()) {
            LOG.warn("{} event=disk_not_coherent device={} io=\"{}\" detail=\"reads may come from this host's page "
                + "cache and miss other hosts' writes: the disk breaks no ties and gives no cut-off evidence; use a "
                + "device and file system that accept O_DIRECT\"", logContext, deviceName, device.ioMode());
          }
        }
        cycle(new SbdDevice(device));
      } catch (IOException | MalformedSectorException | RuntimeException e) {
        ioSinceNanos = IDLE;
        String reason = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        arbiter.fail(clock.nanoTime(), (device == null ? "cannot open " + deviceName + ": " : "") + reason);
        published = arbiter.state();
        if (e instanceof IOException && device != null) {
          closeQuietly(device);
          device = null;
        }
      }
      next += timing.interval().toNanos();
      long wait = next - clock.nanoTime();
      if (wait <= 0) {
        next = clock.nanoTime();
      } else {
        LockSupport.parkNanos(wait);
      }
    }
    if (device != null) {
      closeQuietly(device);
    }
  }

  private void cycle(SbdDevice sbd) throws IOException, MalformedSectorException {
    long readStart = clock.nanoTime();
    ioSinceNanos = readStart;
    SbdHeader header = sbd.readHeader();
    msgwait.observe(header.msgwaitTimeout());
    var slots = sbd.readSlots(header, arbiter.slotsToRead(header));
    long readEnd = clock.nanoTime();
    ioSinceNanos = IDLE;
    // No claim from a node whose reads may be stale: its claim could hold off a side that reads the disk as it is.
    Optional<DiskArbiter.TieRequest> request = notCoherent.isPresent() ? Optional.empty()
        : Optional.ofNullable(tieRequest);
    Optional<DiskArbiter.Write> write = arbiter.onRead(readStart, readEnd, header, slots, local.get(), request);
    published = arbiter.state();
    if (write.isPresent()) {
      long writeStart = clock.nanoTime();
      ioSinceNanos = writeStart;
      sbd.writeSlot(header, write.get().slot(), write.get().content());
      long writeEnd = clock.nanoTime();
      ioSinceNanos = IDLE;
      lastWriteNanos = writeEnd - writeStart;
      arbiter.onWritten(write.get(), writeStart, writeEnd);
      published = arbiter.state();
    }
    cycles++;
  }

  private void closeQuietly(BlockDevice device) {
    try {
      device.close();
    } catch (IOException e) {
      LOG.debug("{} event=disk_close_failed device={} error=\"{}\"", logContext, deviceName, e.getMessage());
    }
  }
}
