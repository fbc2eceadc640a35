package dev.fencing.agent.emulator;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A software watchdog on a FIFO with the Linux softdog's semantics, for tests, e2e and the demo.
 *
 * <ul>
 *   <li>A writer opening the FIFO starts the timer ({@code armed}), like opening {@code /dev/watchdog}; opening it
 *       again while the timer still runs only continues it ({@code reopen}).
 *   <li>Every byte written feeds it (no write boundaries are visible through a FIFO, so bytes are counted).
 *   <li>Closing with {@code 'V'} as the last byte written is a magic close: the timer stops ({@code disarmed}),
 *       unless nowayout is set. Closing without it leaves the timer running after one last ping, as the kernel's
 *       {@code watchdog_release} does ("watchdog did not stop!") ({@code closed}).
 *   <li>When the timer expires the reset command runs once via {@code sh -c} ({@code reset}, then
 *       {@code reset-exit}); the emulator then ignores the old writer and waits for the next open, the "rebooted"
 *       node's agent.
 * </ul>
 *
 * Feeds are summarised: the first after an open is recorded, then at most one {@code feed} line per
 * {@link #FEED_REPORT_INTERVAL} with the count since the previous one.
 */
public final class EmulatedWatchdog implements AutoCloseable {

  /** Minimum time between two {@code feed} lines. */
  public static final Duration FEED_REPORT_INTERVAL = Duration.ofSeconds(1);

  private static final Logger LOG = LoggerFactory.getLogger(EmulatedWatchdog.class);
  private static final int S_IFMT = 0170000;
  private static final int S_IFIFO = 0010000;

  private enum State {
    STOPPED,
    RUNNING,
    // The reset fired while the old writer still had the FIFO open; ignore it until it closes.
    FIRED
  }

  private final Path fifo;
  private final Duration timeout;
  private final boolean nowayout;
  private final String resetCommand;
  private final WatchdogEventLog log;
  private final ScheduledExecutorService timer;
  private final Object lock = new Object();

  // Guarded by lock.
  private State state = State.STOPPED;
  private long deadlineNanos;
  private ScheduledFuture<?> expiry;
  private int lastByte = -1;
  private long feedsSinceReport;
  private long feedsTotal;
  private long lastReportNanos;
  private long resets;

  private volatile boolean closing;
  private volatile FileChannel current;
  private Thread reader;

  /**
   * @param fifo the FIFO path; created (mode 0600) by {@link #start()} if missing
   * @param timeout how long the timer runs without a feed before the reset
   * @param nowayout if true, a magic close does not stop the timer
   * @param resetCommand run with {@code sh -c} when the timer expires; its stdout is discarded (stdout carries the
   *     event lines), its stderr is passed through
   * @param log where events are recorded
   */
  public EmulatedWatchdog(Path fifo, Duration timeout, boolean nowayout, String resetCommand, WatchdogEventLog log) {
    this.fifo = Objects.requireNonNull(fifo, "fifo").toAbsolutePath();
    this.timeout = Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("watchdog timeout must be positive, got " + timeout);
    }
    this.nowayout = nowayout;
    this.resetCommand = Objects.requireNonNull(resetCommand, "resetCommand");
    this.log = Objects.requireNonNull(log, "log");
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "softdog-timer");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Creates the FIFO if needed and starts waiting for a writer.
   *
   * @throws IOException if the path exists and is not a FIFO, or mkfifo fails
   */
  public void start() throws IOException {
    createFifo(fifo);
    log.record("started", fields("fifo", fifo.toString(), "timeoutMs", timeout.toMillis(), "nowayout", nowayout));
    reader = new Thread(this::readLoop, "softdog-fifo-reader");
    reader.setDaemon(true);
    reader.start();
  }

  /** Number of resets so far. */
  public long resets() {
    synchronized (lock) {
      return resets;
    }
  }

  /** True while the timer runs (armed, or closed without magic and not yet expired). */
  public boolean running() {
    synchronized (lock) {
      return state == State.RUNNING;
    }
  }

  /** Stops reading and the timer; a running timer is abandoned without a reset. */
  @Override
  public void close() {
    closing = true;
    FileChannel channel = current;
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException e) {
        LOG.debug("event=fifo_close_failed error={}", e.getMessage());
      }
    }
    Thread r = reader;
    if (r != null && r.isAlive()) {
      unblockOpen(r);
    }
    timer.shutdownNow();
    log.record("stopped", fields("resets", resets()));
  }

  // A reader blocked in open(2) of a FIFO only returns when a writer opens it: be that writer.
  private void unblockOpen(Thread r) {
    Thread opener = new Thread(() -> {
      try (FileChannel w = FileChannel.open(fifo, StandardOpenOption.WRITE)) {
        LOG.debug("event=fifo_unblocked fifo={}", fifo);
      } catch (IOException e) {
        LOG.debug("event=fifo_unblock_failed error={}", e.getMessage());
      }
    }, "softdog-fifo-unblock");
    opener.setDaemon(true);
    opener.start();
    try {
      r.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void readLoop() {
    ByteBuffer buffer = ByteBuffer.allocate(512);
    while (!closing) {
      try (FileChannel channel = FileChannel.open(fifo, StandardOpenOption.READ)) {
        if (closing) {
          return;
        }
        current = channel;
        opened();
        while (true) {
          buffer.clear();
          int n = channel.read(buffer);
          if (n < 0) {
            break;
          }
          if (n > 0) {
            written(buffer.array(), n);
          }
        }
        current = null;
        closed();
      } catch (AsynchronousCloseException e) {
        return;
      } catch (IOException e) {
        if (closing) {
          return;
        }
        LOG.warn("event=fifo_read_failed fifo={} error={}", fifo, e.getMessage());
        try {
          createFifo(fifo);
        } catch (IOException again) {
          LOG.error("event=fifo_unusable fifo={} error={}", fifo, again.getMessage());
          return;
        }
      }
    }
  }

  private void opened() {
    synchronized (lock) {
      lastByte = -1;
      feedsSinceReport = 0;
      lastReportNanos = System.nanoTime() - FEED_REPORT_INTERVAL.toNanos();
      if (state == State.RUNNING) {
        log.record("reopen", fields("leftMs", remainingMillis()));
        return;
      }
      state = State.RUNNING;
      deadlineNanos = System.nanoTime() + timeout.toNanos();
      scheduleExpiry();
      log.record("armed", fields("timeoutMs", timeout.toMillis()));
    }
  }

  private void written(byte[] bytes, int n) {
    synchronized (lock) {
      if (state != State.RUNNING) {
        return;
      }
      long now = System.nanoTime();
      deadlineNanos = now + timeout.toNanos();
      lastByte = bytes[n - 1] & 0xff;
      feedsSinceReport += n;
      feedsTotal += n;
      if (now - lastReportNanos >= FEED_REPORT_INTERVAL.toNanos()) {
        log.record("feed", fields("count", feedsSinceReport, "total", feedsTotal));
        feedsSinceReport = 0;
        lastReportNanos = now;
      }
    }
  }

  private void closed() {
    synchronized (lock) {
      if (state == State.FIRED) {
        state = State.STOPPED;
        log.record("closed", fields("afterReset", true));
        return;
      }
      if (state != State.RUNNING) {
        return;
      }
      boolean magic = lastByte == 'V';
      if (magic && !nowayout) {
        state = State.STOPPED;
        cancelExpiry();
        log.record("disarmed", fields("feeds", feedsSinceReport, "total", feedsTotal));
        return;
      }
      deadlineNanos = System.nanoTime() + timeout.toNanos();
      log.record("closed", fields("magic", magic, "nowayout", nowayout, "running", true,
          "feeds", feedsSinceReport, "leftMs", timeout.toMillis()));
    }
  }

  // Guarded by lock.
  private void scheduleExpiry() {
    long delay = Math.max(0, deadlineNanos - System.nanoTime());
    expiry = timer.schedule(this::checkExpiry, delay, TimeUnit.NANOSECONDS);
  }

  // Guarded by lock.
  private void cancelExpiry() {
    if (expiry != null) {
      expiry.cancel(false);
      expiry = null;
    }
  }

  // Guarded by lock.
  private long remainingMillis() {
    return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
  }

  private void checkExpiry() {
    synchronized (lock) {
      if (state != State.RUNNING || closing) {
        return;
      }
      if (System.nanoTime() < deadlineNanos) {
        scheduleExpiry();
        return;
      }
      state = current != null ? State.FIRED : State.STOPPED;
      expiry = null;
      resets++;
      log.record("reset", fields("command", resetCommand, "resets", resets, "total", feedsTotal));
    }
    runResetCommand();
  }

  private void runResetCommand() {
    try {
      Process process = new ProcessBuilder("sh", "-c", resetCommand)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .redirectError(ProcessBuilder.Redirect.INHERIT)
          .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
          .start();
      process.onExit().thenAccept(p -> log.record("reset-exit", fields("exitCode", p.exitValue())));
    } catch (IOException e) {
      log.record("reset-exit", fields("error", String.valueOf(e.getMessage())));
    }
  }

  private static Map<String, Object> fields(Object... keyValues) {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      map.put((String) keyValues[i], keyValues[i + 1]);
    }
    return map;
  }

  /**
   * Creates {@code path} as a FIFO (mode 0600) with mkfifo unless one exists.
   *
   * @throws IOException if something else exists there or mkfifo fails
   */
  static void createFifo(Path path) throws IOException {
    if (Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
      int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
      if ((mode & S_IFMT) != S_IFIFO) {
        throw new IOException(path + " exists and is not a FIFO: remove it or choose another --fifo path");
      }
      return;
    }
    Path parent = path.getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Process mkfifo = new ProcessBuilder("mkfifo", "-m", "0600", path.toString())
        .redirectErrorStream(true).start();
    String output = new String(mkfifo.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      if (mkfifo.waitFor() != 0) {
        throw new IOException("mkfifo " + path + " failed: " + output.strip());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while creating FIFO " + path, e);
    }
  }
}
