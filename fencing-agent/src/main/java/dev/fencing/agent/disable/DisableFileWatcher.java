package dev.fencing.agent.disable;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the disable file ({@code /var/run/fencing-agent/disable}, written by bashible around maintenance).
 *
 * <p>The file's directory is watched with inotify (the JDK's {@link WatchService}): an event that names the file
 * (or says events were lost) makes the scheduler thread read it at once, so creation and removal are seen within
 * milliseconds, and an idle agent does not wake up for the file. Every {@link #BACKSTOP_INTERVAL} the file is read
 * anyway and the directory checked to be the one watched (a directory moved away and replaced keeps an old watch
 * alive); a change that some file system does not report is still seen within that. Without a watch (the directory
 * missing, inotify's limits reached, a file system that refuses it) the file is polled every {@link #POLL_INTERVAL}
 * as before, and the watch is tried again: at every poll while the directory is missing, every
 * {@link #WATCH_RETRY_POLLS} polls after an error.
 *
 * <p>Anything at the path counts as present. Its content is informational: the first line, trimmed, stripped of
 * control characters and cut to {@link #MAX_REASON_LENGTH} characters, becomes the reason; nothing in it is ever
 * interpreted. The listener is called once from {@link #start()} with the initial state (so a consumer cannot miss a
 * file that existed before the agent started), then on the scheduler thread only when the state (presence or
 * reason) changes.
 */
public final class DisableFileWatcher implements AutoCloseable {

  /** How often the file is read while its directory cannot be watched. */
  public static final Duration POLL_INTERVAL = Duration.ofMillis(500);

  /** How often the file is read, and the watch checked, while the directory is watched. */
  public static final Duration BACKSTOP_INTERVAL = Duration.ofSeconds(5);

  /** Polls between two attempts to watch after an error (about 30 s): a failed attempt costs an exception. */
  public static final int WATCH_RETRY_POLLS = 60;

  /** Longest reason kept from the file. */
  public static final int MAX_REASON_LENGTH = 256;

  private static final Logger LOG = LoggerFactory.getLogger(DisableFileWatcher.class);
  // Only the beginning of the file is read: a reason is one line, and a huge file must not cost memory.
  private static final int MAX_READ_BYTES = 4096;

  /** Opens an inotify instance; a seam so tests can refuse one. */
  interface WatchServices {
    WatchService open() throws IOException;
  }

  private final Path file;
  private final Path directory;
  private final Path name;
  private final Consumer<DisableState> listener;
  private final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;
  private final Duration backstop;
  private final WatchServices watchServices;
  private final Runnable checkNow = () -> check(false);
  private final Runnable checkPeriodically = () -> {
    check(true);
    scheduleNext();
  };
  private final AtomicLong reads = new AtomicLong();
  private volatile DisableState current = DisableState.ABSENT;
  private volatile boolean closed;

  // Guarded by this: set up by start() and on the scheduler thread, closed from any thread. The key is also read
  // without the lock (watching()).
  private WatchService watchService;
  private volatile WatchKey key;
  private Object watchedDirectory;
  private int pollsUntilRetry;
  private boolean lastAttemptFailed;
  private ScheduledFuture<?> next;

  /** Watches {@code file} on a scheduler thread of its own. */
  public DisableFileWatcher(Path file, Consumer<DisableState> listener) {
    this(file, listener, Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "disable-file-watcher");
      t.setDaemon(true);
      return t;
    }), true, BACKSTOP_INTERVAL, DisableFileWatcher::openWatchService);
  }

  /** Watches {@code file} on the given single-thread scheduler, which the caller owns and shuts down. */
  public DisableFileWatcher(Path file, Consumer<DisableState> listener, ScheduledExecutorService scheduler) {
    this(file, listener, scheduler, false, BACKSTOP_INTERVAL, DisableFileWatcher::openWatchService);
  }

  DisableFileWatcher(Path file, Consumer<DisableState> listener, ScheduledExecutorService scheduler,
                     boolean ownsScheduler, Duration backstop, WatchServices watchServices) {
    this.file = Objects.requireNonNull(file, "file");
    Path absolute = file.toAbsolutePath();
    this.directory = absolute.getParent();
    this.name = absolute.getFileName();
    this.listener = Objects.requireNonNull(listener, "listener");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.ownsScheduler = ownsScheduler;
    this.backstop = Objects.requireNonNull(backstop, "backstop");
    this.watchServices = Objects.requireNonNull(watchServices, "watchServices");
  }

  private static WatchService openWatchService() throws IOException {
    return FileSystems.getDefault().newWatchService();
  }

  /**
   * Reads the current state, hands it to the listener on the calling thread, and starts watching.
   *
   * @throws RuntimeException whatever the listener throws for the initial state (watching is then not started): a
   *     consumer that cannot take the initial state must not run as if there were no disable file
   */
  public synchronized void start() {
    if (next != null || closed) {
      throw new IllegalStateException("disable file watcher already started for " + file);
    }
    // Watch first: a file created between the read and the watch would otherwise wait for the backstop.
    ensureWatch(false);
    current = read(file);
    reads.incrementAndGet();
    LOG.info("event=disable_file_watch file={} present={} reason=\"{}\" mode={}", file, current.present(),
        current.reason(), watching() ? "inotify" : "poll");
    try {
      listener.accept(current);
    } catch (RuntimeException e) {
      close();
      throw e;
    }
    scheduleNext();
  }

  /** The latest state seen. */
  public DisableState current() {
    return current;
  }

  /** The watched path. */
  public Path file() {
    return file;
  }

  /** Whether the file's directory is watched now (else the file is polled every {@link #POLL_INTERVAL}). */
  public boolean watching() {
    WatchKey k = key;
    return k != null && k.isValid();
  }

  /** The (device, inode) of the directory watched, for tests: null while not watching. */
  synchronized Object watchedDirectory() {
    return watching() ? watchedDirectory : null;
  }

  /** How often the file has been read, for tests: events about other files must not cause reads. */
  long reads() {
    return reads.get();
  }

  /** Stops watching; shuts down the scheduler only if this watcher created it. */
  @Override
  public synchronized void close() {
    closed = true;
    if (next != null) {
      next.cancel(false);
    }
    if (watchService != null) {
      try {
        watchService.close();
      } catch (IOException e) {
        LOG.debug("event=disable_file_watch_close_failed file={} error={}", file, e.toString());
      }
    }
    if (ownsScheduler) {
      scheduler.shutdownNow();
    }
  }

  private synchronized void scheduleNext() {
    if (closed) {
      return;
    }
    if (next != null) {
      next.cancel(false);
    }
    long delay = watching() ? backstop.toNanos() : POLL_INTERVAL.toNanos();
    next = scheduler.schedule(checkPeriodically, delay, TimeUnit.NANOSECONDS);
  }

  /** On the scheduler thread: keeps the watch up, reads the file, and tells the listener about a change. */
  private void check(boolean periodic) {
    // Nothing may escape: an exception would end the periodic chain.
    try {
      boolean wasWatching = key != null; // set while the watch was up, even if inotify has just ended it
      ensureWatch(periodic);
      if (wasWatching && !watching() && !periodic) {
        scheduleNext(); // back to polling now, not after a backstop interval
      }
      DisableState seen = read(file);
      reads.incrementAndGet();
      if (seen.equals(current)) {
        return;
      }
      current = seen;
      LOG.info("event=disable_file_changed file={} present={} reason=\"{}\"", file, seen.present(), seen.reason());
      listener.accept(seen);
    } catch (RuntimeException e) {
      LOG.warn("event=disable_file_listener_failed file={} error={}", file, String.valueOf(e));
    }
  }

  /**
   * Watches the directory if it is not watched yet; with {@code verify}, also checks that the watched directory is
   * still the one at the path (a directory moved away keeps its watch).
   */
  private synchronized void ensureWatch(boolean verify) {
    if (closed || directory == null) {
      return;
    }
    if (key != null && !key.isValid()) {
      LOG.info("event=disable_file_watch_lost file={} reason=directory_gone poll_ms={}", file,
          POLL_INTERVAL.toMillis());
      key = null;
    }
    if (key != null) {
      if (!verify || Objects.equals(directoryIdentity(), watchedDirectory)) {
        return;
      }
      LOG.info("event=disable_file_watch_lost file={} reason=directory_replaced", file);
      key.cancel();
      key = null;
    }
    if (!Files.isDirectory(directory)) {
      return; // tried again at every poll: no exception to pay for
    }
    if (lastAttemptFailed && --pollsUntilRetry > 0) {
      return;
    }
    try {
      if (watchService == null) {
        WatchService opened = watchServices.open();
        watchService = opened;
        Thread events = new Thread(() -> deliverEvents(opened), "fencing-disable-watch");
        events.setDaemon(true);
        events.start();
      }
      Object identity = directoryIdentity();
      key = directory.register(watchService, StandardWatchEventKinds.ENTRY_CREATE,
          StandardWatchEventKinds.ENTRY_DELETE, StandardWatchEventKinds.ENTRY_MODIFY);
      watchedDirectory = identity;
      if (lastAttemptFailed) {
        LOG.info("event=disable_file_watch_restored file={}", file);
      }
      lastAttemptFailed = false;
    } catch (IOException | RuntimeException e) {
      if (!lastAttemptFailed) {
        LOG.warn("event=disable_file_watch_unavailable file={} error=\"{}\" poll_ms={} retry_in_polls={}", file,
            e.toString(), POLL_INTERVAL.toMillis(), WATCH_RETRY_POLLS);
      }
      lastAttemptFailed = true;
      pollsUntilRetry = WATCH_RETRY_POLLS;
    }
  }

  /** The directory's (device, inode), or null when it cannot be read. */
  private Object directoryIdentity() {
    try {
      return Files.readAttributes(directory, BasicFileAttributes.class).fileKey();
    } catch (IOException e) {
      return null;
    }
  }

  /** The event thread: hands every event that may concern the file to the scheduler thread, until closed. */
  private void deliverEvents(WatchService service) {
    while (!closed) {
      WatchKey k;
      try {
        k = service.take();
      } catch (ClosedWatchServiceException | InterruptedException e) {
        return;
      }
      boolean concernsFile = false;
      for (WatchEvent<?> event : k.pollEvents()) {
        // An overflow lost events, so any of them may have been the file's.
        concernsFile |= event.kind() == StandardWatchEventKinds.OVERFLOW || name.equals(event.context());
      }
      boolean stillWatched = k.reset();
      if (concernsFile || !stillWatched) {
        try {
          scheduler.execute(checkNow);
        } catch (RejectedExecutionException e) {
          return; // the scheduler is shut down: the agent is stopping
        }
      }
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
   * throws and catches two exceptions for an absent file, and this runs at every poll while the file is absent.
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
