package dev.fencing.agent.status;

import dev.fencing.agent.config.AtomicFileReplacer;
import dev.fencing.agent.quorum.MonotonicClock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the host status file current: replaces the file atomically ({@link AtomicFileReplacer}, mode 0644) when any
 * field of the agent's {@link HostStatus} changed, and at least every {@link #REFRESH_INTERVAL} anyway, so
 * {@code updated_unix} tells a reader whether an agent runs at all.
 *
 * <p>A change is written as soon as the agent {@linkplain #offer offers} a status that differs from the one it
 * offered before (the quorum loop does so after every tick, without waiting for the write); a check scheduled for the
 * moment the refresh falls due (and again after each write) is the backstop and does the refresh. An idle agent
 * therefore wakes this writer once every {@link #REFRESH_INTERVAL}, not at every tick or every second.
 *
 * <p>A file that cannot be written (read-only mount, missing permission, a directory in the way) is logged, the
 * first time and then at most every {@link #FAILURE_LOG_INTERVAL}, and retried on the next change or refresh; it
 * never reaches the quorum loop or the feed.
 */
public final class StatusFileWriter implements AutoCloseable {

  /**
   * Longest time between two writes of an unchanged status (the contract says at most 5 s): the backstop check runs
   * when it falls due, so the file's {@code updated_unix} is at most this plus the scheduling delay and the second it
   * is rounded down to old.
   */
  public static final Duration REFRESH_INTERVAL = Duration.ofSeconds(4);
  /** The backstop check never runs sooner than this after the previous one (a clock that does not move). */
  static final Duration MIN_CHECK_DELAY = Duration.ofMillis(10);
  /** Shortest time between two log lines about a failing write. */
  public static final Duration FAILURE_LOG_INTERVAL = Duration.ofMinutes(1);

  private static final Logger LOG = LoggerFactory.getLogger(StatusFileWriter.class);
  private static final Set<PosixFilePermission> MODE = PosixFilePermissions.fromString("rw-r--r--");

  private final Path file;
  private final Supplier<HostStatus> source;
  private final InstantSource wallClock;
  private final MonotonicClock clock;
  private final AtomicFileReplacer replacer;
  private final String logContext;

  private HostStatus lastAttempted;
  private boolean attempted;
  private long lastAttemptNanos;
  private boolean failing;
  private long lastFailureLogNanos;
  private long suppressedFailures;
  private long writes;
  private ScheduledFuture<?> task;
  private final Runnable checkTask = this::check;
  // Set while started; read without the lock, which a write holds through its fsync.
  private volatile ScheduledExecutorService scheduler;
  // Touched only by the offering thread (the quorum loop); volatile because tests offer from several.
  private volatile HostStatus lastOffered;

  /**
   * @param file the status file; its directory is created when missing
   * @param source the agent's status as of now; asked on every check
   * @param wallClock for {@code updated_unix}
   * @param clock monotonic time for the refresh and the log rate limit
   * @param replacer atomic replacement
   * @param logContext {@code node=…} prefix for log lines
   */
  public StatusFileWriter(Path file, Supplier<HostStatus> source, InstantSource wallClock, MonotonicClock clock,
      AtomicFileReplacer replacer, String logContext) {
    this.file = Objects.requireNonNull(file, "file");
    this.source = Objects.requireNonNull(source, "source");
    this.wallClock = Objects.requireNonNull(wallClock, "wallClock");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.replacer = Objects.requireNonNull(replacer, "replacer");
    this.logContext = Objects.requireNonNull(logContext, "logContext");
  }

  /**
   * Writes the file now, then checks on {@code scheduler} (owned by the caller) whenever the refresh falls due: at
   * {@link #REFRESH_INTERVAL} after the latest attempt, offered writes included.
   */
  public synchronized void start(ScheduledExecutorService scheduler) {
    if (task != null) {
      throw new IllegalStateException("status file writer already started for " + file);
    }
    writeIfDue();
    this.scheduler = scheduler;
    scheduleCheck(scheduler);
  }

  /** The backstop: a check, then the next one at the refresh due time. */
  private synchronized void check() {
    ScheduledExecutorService s = scheduler;
    if (s == null) {
      return;
    }
    writeIfDue();
    scheduleCheck(s);
  }

  /**
   * The next check: when the refresh falls due after the latest attempt; a full interval from now when it is already
   * due (the status could not be read, so nothing was attempted: retried every interval, never in a loop).
   */
  private void scheduleCheck(ScheduledExecutorService s) {
    long due = attempted ? REFRESH_INTERVAL.toNanos() - (clock.nanoTime() - lastAttemptNanos) : 0;
    long delay = due <= 0 ? REFRESH_INTERVAL.toNanos()
        : Math.min(REFRESH_INTERVAL.toNanos(), Math.max(MIN_CHECK_DELAY.toNanos(), due));
    try {
      task = s.schedule(checkTask, delay, TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // Shutting down: close() writes the final status.
    }
  }

  /**
   * The agent's status as of now: when it differs from the one offered last, a check runs at once on the writer's
   * scheduler (it reads the status afresh and writes when it differs from the file). Never blocks and never throws,
   * so the quorum loop can call it after every tick; before {@link #start} and after {@link #close} it does nothing.
   *
   * @return true when a check was requested
   */
  public boolean offer(HostStatus status) {
    ScheduledExecutorService s = scheduler;
    if (s == null || status == null || status.equals(lastOffered)) {
      return false;
    }
    lastOffered = status;
    try {
      s.execute(this::writeIfDue);
      return true;
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // Shutting down: close() writes the final status.
      return false;
    }
  }

  /**
   * One check: writes when a field changed since the last attempt or the refresh is due. Never throws (a periodic
   * task that threw would be cancelled silently).
   *
   * @return true when the file was written
   */
  public synchronized boolean writeIfDue() {
    long now = clock.nanoTime();
    HostStatus status;
    try {
      status = source.get();
    } catch (RuntimeException e) {
      failed(now, "cannot read the agent's status: " + e);
      return false;
    }
    if (attempted && status.equals(lastAttempted) && now - lastAttemptNanos < REFRESH_INTERVAL.toNanos()) {
      return false;
    }
    attempted = true;
    lastAttempted = status;
    lastAttemptNanos = now;
    try {
      Path dir = file.toAbsolutePath().getParent();
      if (!Files.isDirectory(dir)) {
        Files.createDirectories(dir);
      }
      replacer.replace(file, status.render(wallClock.instant().getEpochSecond()).getBytes(StandardCharsets.US_ASCII),
          MODE);
    } catch (IOException | RuntimeException e) {
      failed(now, e.toString());
      return false;
    }
    writes++;
    if (failing) {
      failing = false;
      LOG.info("{} event=status_file_recovered file={} failures_not_logged={}", logContext, file,
          suppressedFailures);
      suppressedFailures = 0;
    }
    return true;
  }

  private void failed(long now, String error) {
    if (failing && now - lastFailureLogNanos < FAILURE_LOG_INTERVAL.toNanos()) {
      suppressedFailures++;
      return;
    }
    LOG.warn("{} event=status_file_write_failed file={} error=\"{}\" retry=\"on change, at least every {}\""
        + " failures_not_logged={}", logContext, file, error, REFRESH_INTERVAL, suppressedFailures);
    failing = true;
    lastFailureLogNanos = now;
    suppressedFailures = 0;
  }

  /** Files written since start. */
  public synchronized long writes() {
    return writes;
  }

  /** The status file's path. */
  public Path file() {
    return file;
  }

  /** Stops checking and writes the final status (the agent's stopped state) once more. Idempotent. */
  @Override
  public synchronized void close() {
    if (task == null) {
      return;
    }
    task.cancel(false);
    task = null;
    scheduler = null;
    attempted = false;
    writeIfDue();
  }
}
