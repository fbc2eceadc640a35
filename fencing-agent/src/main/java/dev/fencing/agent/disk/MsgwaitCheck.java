package dev.fencing.agent.disk;

import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the shared disk's SBD msgwait (the header's {@code sbd create -4}) covers the time this node needs to be
 * reset after a poison pill. {@code sbd -d DEV message NODE reset}, fence_sbd and pacemaker write the pill into the
 * node's mailbox and count the node fenced msgwait later; a node that may still run then is a split brain for
 * whoever relies on them.
 *
 * <p>A warning only: nothing here reaches feeding, quorum or fencing. A msgwait too short is the external fencer's
 * problem, and refusing the disk over it (with {@code required: true}, taking quorum away) would fence the whole group
 * over a header field. It logs {@code event=disk_msgwait_too_short} once per change of (msgwait, needed) and
 * {@code event=disk_msgwait_ok} once when that ends, and publishes the verdict for the gauge and the status.
 *
 * <p>Thread-safe: the disk thread reports every header it reads ({@link #observe}), the quorum thread every config
 * ({@link #require}); the readers ({@link #tooShort}, {@link #conditionWhenUsable}) never block.
 */
public final class MsgwaitCheck {

  private static final Logger LOG = LoggerFactory.getLogger(MsgwaitCheck.class);
  private static final long UNKNOWN = -1;

  private final String device;
  private final String logContext;

  // Guarded by this.
  private long msgwaitSeconds = UNKNOWN;
  private long neededSeconds = UNKNOWN;
  private boolean warned;

  private volatile Verdict verdict = Verdict.UNDECIDED;

  /** What readers see: the gauge value and the disk condition while the disk is otherwise usable. */
  private record Verdict(double tooShort, String condition) {
    static final Verdict UNDECIDED = new Verdict(Double.NaN, "ok");
    static final Verdict LONG_ENOUGH = new Verdict(0, "ok");
  }

  /**
   * @param device the device path as configured, for logs and the advice
   * @param logContext {@code node=… group=…}
   */
  public MsgwaitCheck(String device, String logContext) {
    this.device = device;
    this.logContext = logContext;
  }

  /**
   * The longest time from a poison pill landing in this node's mailbox to this node's reset, while it is armed:
   * {@code max(interval, 2 × ioTimeout) + ioTimeout + evaluationTick + watchdogTimeout + fenceMargin}.
   *
   * <ol>
   *   <li><b>Seen</b>: {@code max(interval, 2 × ioTimeout) + ioTimeout}. The pill may land just after read k took
   *       the mailbox, as early as that read's start. Read k may take up to {@code ioTimeout}, this node's slot write
   *       after it another {@code ioTimeout}; the next cycle starts at the later of one interval after read k's start
   *       and that write's end ({@link DiskMonitor#run}), and its read may take {@code ioTimeout} again before the
   *       disk thread publishes the pill. A read that takes longer still publishes the pill when it returns (nothing
   *       discards a slow read), but later: the bound needs the disk to answer within {@code ioTimeout}, or
   *       {@code required: true} under Fence, where an I/O pending that long takes quorum away by the same instant
   *       and feeding stops anyway.
   *   <li><b>Acted on</b>: {@code evaluationTick}. The quorum loop reads the published pill at its next tick and
   *       withdraws the feeder's permission there ({@code WatchdogSupervisor}, {@code event=fencing_started
   *       reason=poison_pill}); the feeder thread need not wake up for that, so no feed interval is added: at most a
   *       keepalive already under way lands at that instant.
   *   <li><b>Reset</b>: {@code watchdogTimeout} after that last keepalive.
   *   <li><b>Margin</b>: {@code fenceMargin}, as in the safe-to-assume-fenced delay ({@code tStop + watchdogTimeout +
   *       fenceMargin}): stalls of the threads involved, a late tick, the device's timer granularity.
   * </ol>
   *
   * <p>Not covered by any msgwait: a node that is not armed (maintenance, disable file, mode Notify) is not reset by
   * a pill at all, and without {@code required: true} a disk that hangs delays the pill until it answers.
   */
  public static Duration needed(DiskTiming disk, Duration evaluationTick, Duration watchdogTimeout,
      Duration fenceMargin) {
    Duration readAndWrite = disk.ioTimeout().multipliedBy(2);
    Duration nextRead = disk.interval().compareTo(readAndWrite) > 0 ? disk.interval() : readAndWrite;
    return nextRead.plus(disk.ioTimeout()).plus(evaluationTick).plus(watchdogTimeout).plus(fenceMargin);
  }

  /** The shortest msgwait in whole seconds (as the header holds it) that is not shorter than {@code needed}. */
  public static long wholeSeconds(Duration needed) {
    long seconds = needed.getSeconds();
    return needed.getNano() > 0 ? seconds + 1 : seconds;
  }

  /** The group's config gives this node {@code needed} (see {@link #needed}); from the quorum thread. */
  public synchronized void require(Duration needed) {
    long seconds = wholeSeconds(needed);
    if (seconds != neededSeconds) {
      neededSeconds = seconds;
      evaluate();
    }
  }

  /** A header was read with this msgwait, in seconds; from the disk thread, every cycle. */
  public synchronized void observe(long headerMsgwaitSeconds) {
    if (headerMsgwaitSeconds != msgwaitSeconds) {
      msgwaitSeconds = headerMsgwaitSeconds;
      evaluate();
    }
  }

  /** 1 while the msgwait read is shorter than needed, 0 while not, NaN before both are known. */
  public double tooShort() {
    return verdict.tooShort();
  }

  /** The disk condition when the disk is otherwise usable: "ok", or "ok, but msgwait … is shorter …" and what to do. */
  public String conditionWhenUsable() {
    return verdict.condition();
  }

  private void evaluate() {
    if (msgwaitSeconds == UNKNOWN || neededSeconds == UNKNOWN) {
      verdict = Verdict.UNDECIDED;
      return;
    }
    if (msgwaitSeconds < neededSeconds) {
      // Only called on a change of the pair: one line per change, not per cycle.
      warned = true;
      LOG.warn("{} event=disk_msgwait_too_short msgwait={}s needed={}s device={} detail=\"sbd, fence_sbd and"
          + " pacemaker count this node fenced msgwait after writing a poison pill; it may still run then\"",
          logContext, msgwaitSeconds, neededSeconds, device);
      verdict = new Verdict(1, "ok, but msgwait " + msgwaitSeconds + "s is shorter than this node needs to be reset"
          + " after a poison pill (" + neededSeconds + "s): sbd, fence_sbd and pacemaker would count it fenced too"
          + " early; recreate the header with 'sbd -d " + device + " -4 " + neededSeconds + " create' (it empties"
          + " every slot and mailbox: docs/runbook.md#disk-msgwait-too-short)");
      return;
    }
    if (warned) {
      warned = false;
      LOG.info("{} event=disk_msgwait_ok msgwait={}s needed={}s device={}", logContext, msgwaitSeconds,
          neededSeconds, device);
    }
    verdict = Verdict.LONG_ENOUGH;
  }
}
