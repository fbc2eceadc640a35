package dev.fencing.agent.emulator;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.InstantSource;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The emulator's record: one JSON object per line, {@code {"ts":"<instant>","event":"<name>",...}}, written to a
 * stream (stdout for the main) and, optionally, appended to a file that tests and the e2e suite read.
 */
public final class WatchdogEventLog implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(WatchdogEventLog.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final PrintStream out;
  private final OutputStream file;
  private final InstantSource clock;

  /**
   * @param out where every line goes (not closed by {@link #close()})
   * @param eventsFile appended to line by line, created if missing; null for none
   * @param clock time of the {@code ts} field
   * @throws IOException if the events file cannot be opened
   */
  public WatchdogEventLog(PrintStream out, Path eventsFile, InstantSource clock) throws IOException {
    this.out = Objects.requireNonNull(out, "out");
    this.clock = Objects.requireNonNull(clock, "clock");
    if (eventsFile == null) {
      this.file = null;
    } else {
      Path parent = eventsFile.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      this.file = Files.newOutputStream(eventsFile, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
          StandardOpenOption.WRITE);
    }
  }

  /** Writes one event line; {@code fields} values are numbers, booleans or strings. */
  public synchronized void record(String event, Map<String, ?> fields) {
    ObjectNode line = JSON.createObjectNode();
    line.put("ts", clock.instant().toString());
    line.put("event", event);
    fields.forEach((k, v) -> line.set(k, JSON.valueToTree(v)));
    String text = line.toString();
    out.println(text);
    out.flush();
    if (file != null) {
      try {
        file.write((text + "\n").getBytes(StandardCharsets.UTF_8));
        file.flush();
      } catch (IOException e) {
        LOG.warn("event=events_file_write_failed error={}", e.getMessage());
      }
    }
  }

  @Override
  public synchronized void close() {
    if (file != null) {
      try {
        file.close();
      } catch (IOException e) {
        LOG.warn("event=events_file_close_failed error={}", e.getMessage());
      }
    }
  }
}
