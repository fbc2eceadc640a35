package dev.fencing.agent.disable;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the disable file ({@code /var/run/fencing-agent/disable}, written by bashible around maintenance) by
 * polling it every {@link #POLL_INTERVAL}: creation and removal are noticed within half a second whatever created
 * the file and however the directory is mounted, for the price of one stat per interval (two wakeups a second of an
 * otherwise idle thread; bashible waits seconds for the disarm, so a faster poll would buy nothing).
 *
 * <p>Anything at the path counts as present. Its content is informational: the first line, trimmed, stripped of
 * control characters and cut to {@link #MAX_REASON_LENGTH} characters, becomes the reason; nothing in it is ever
 * interpreted. The listener is called once from {@link #start()} with the initial state (so a consumer cannot miss a
 * file that existed before the agent started), then on the scheduler thread only when the state (presence or
 * reason) changes.
 */
public final class DisableFileWatcher implements AutoCloseable {

  /** How often the file is checked. */
  public static final Duration POLL_INTERVAL = Duration.ofMillis(500);

  /** Longest reason kept from the file. */
  public static final int MAX_REASON_LENGTH = 256;

  private static final Logger LOG = LoggerFactory.getLogger(DisableFileWatcher.class);
  // Only the beginning of the file is read: a reason is one line, and a huge file must not cost memory.
  private static final int MAX_READ_BYTES = 4096;

  private final Path file;
  private final Consumer<DisableState> listener;
  private final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;
  private volatile DisableState current = DisableState.ABSENT;
  private ScheduledFuture<?> task;

  /** Watches {@code file} on a scheduler thread of its own. */
  public DisableFileWatcher(Path file, Consumer<DisableState> listener) {
    this(file, listener, Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "disable-file-watcher");
      t.setDaemon(true);
      return t;
    }), true);
  }

  /** Watches {@code file} on the given scheduler, which the caller owns and shuts down. */
  public DisableFileWatcher(Path file, Consumer<DisableState> listener, ScheduledExecutorService scheduler) {
    this(file, listener, scheduler, false);
  }

  private DisableFileWatcher(
      Path file, Consumer<DisableState> listener, ScheduledExecutorService scheduler, boolean ownsScheduler) {
    this.file = Objects.requireNonNull(file, "file");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.ownsScheduler = ownsScheduler;
  }

  /**
   * Reads the current state, hands it to the listener on the calling thread, and starts polling.
   *
   * @throws RuntimeException whatever the listener throws for the initial state (polling is then not started): a
   *     consumer that cannot take the initial state must not run as if there were no disable file
   */
  public synchronized void start() {
    if (task != null) {
      throw new IllegalStateException("disable file watcher already started for " + file);
    }
    current = read(file);
    LOG.info("event=disable_file_watch file={} present={} reason=\"{}\"", file, current.present(), current.reason());
    listener.accept(current);
    long period = POLL_INTERVAL.toMillis();
    task = scheduler.scheduleWithFixedDelay(this::poll, period, period, TimeUnit.MILLISECONDS);
  }

  /** The latest state seen. */
  public DisableState current() {
    return current;
  }

  /** The watched path. */
  public Path file() {
    return file;
  }

  /** Stops polling; shuts down the scheduler only if this watcher created it. */
  @Override
  public synchronized void close() {
    if (task != null) {
      task.cancel(false);
      task = null;
    }
    if (ownsScheduler) {
      scheduler.shutdownNow();
    }
  }

  private void poll() {
    // Nothing may escape: an exception would silently cancel the periodic task.
    try {
      DisableState next = read(file);
      if (next.equals(current)) {
        return;
      }
      current = next;
      LOG.info("event=disable_file_changed file={} present={} reason=\"{}\"", file, next.present(), next.reason());
      listener.accept(next);
    } catch (RuntimeException e) {
      LOG.warn("event=disable_file_listener_failed file={} error={}", file, String.valueOf(e));
    }
  }

  /** Reads the disable state of {@code file} now. */
  public static DisableState read(Path file) {
    if (!present(file)) {
      return DisableState.ABSENT;
    }
    if (!Files.isRegularFile(file)) {
      return new DisableState(true, "");
    }
    byte[] head;
    try (InputStream in = Files.newInputStream(file)) {
      head = in.readNBytes(MAX_READ_BYTES);
    } catch (IOException e) {
      // Present but unreadable still disarms; the reason is only for display.
      LOG.debug("event=disable_file_unreadable file={} error={}", file, e.getMessage());
      return new DisableState(true, "");
    }
    return new DisableState(true, reasonFrom(head));
  }

  /**
   * Whether anything is at {@code file}, a dangling symbolic link included. Answered from the directory's entries
   * when the path does not resolve: the JDK's no-follow existence test ({@code Files.exists(file, NOFOLLOW_LINKS)})
   * throws and catches two exceptions for an absent file, and this runs twice a second while the file is absent.
   */
  static boolean present(Path file) {
    if (file.toFile().exists()) {
      return true;
    }
    Path absolute = file.toAbsolutePath();
    Path dir = absolute.getParent();
    Path name = absolute.getFileName();
    // null: no such directory (or not readable), so nothing can be at the path either.
    String[] entries = dir == null || name == null ? null : dir.toFile().list();
    if (entries == null) {
      return false;
    }
    String wanted = name.toString();
    for (String entry : entries) {
      if (entry.equals(wanted)) {
        return true;
      }
    }
    return false;
  }

  /** The first line of {@code content}, decoded leniently, without control characters, trimmed and shortened. */
  static String reasonFrom(byte[] content) {
    CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPLACE)
        .onUnmappableCharacter(CodingErrorAction.REPLACE);
    String text;
    try {
      text = decoder.decode(ByteBuffer.wrap(content)).toString();
    } catch (CharacterCodingException e) {
      return "";
    }
    int end = 0;
    while (end < text.length() && text.charAt(end) != '\n' && text.charAt(end) != '\r') {
      end++;
    }
    StringBuilder line = new StringBuilder(Math.min(end, MAX_REASON_LENGTH));
    for (int i = 0; i < end; i++) {
      char c = text.charAt(i);
      line.append(Character.isISOControl(c) ? ' ' : c);
    }
    String reason = line.toString().strip();
    return reason.length() > MAX_REASON_LENGTH ? reason.substring(0, MAX_REASON_LENGTH) : reason;
  }
}
