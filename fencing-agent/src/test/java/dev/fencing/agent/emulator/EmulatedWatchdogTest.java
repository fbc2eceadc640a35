package dev.fencing.agent.emulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The emulator end to end through a real FIFO, with short timeouts. */
class EmulatedWatchdogTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private final List<AutoCloseable> toClose = new ArrayList<>();
  private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  private Path fifo() {
    return dir.resolve("watchdog");
  }

  private Path marker() {
    return dir.resolve("resets");
  }

  private Path eventsFile() {
    return dir.resolve("events.jsonl");
  }

  private EmulatedWatchdog start(Duration timeout, boolean nowayout) throws IOException {
    WatchdogEventLog log = new WatchdogEventLog(new PrintStream(stdout, true, StandardCharsets.UTF_8), eventsFile(),
        InstantSource.system());
    EmulatedWatchdog watchdog = new EmulatedWatchdog(fifo(), timeout, nowayout,
        "echo reset >> '" + marker() + "'", log);
    toClose.add(log);
    toClose.add(watchdog);
    watchdog.start();
    return watchdog;
  }

  private List<String> events() {
    try {
      List<String> names = new ArrayList<>();
      for (String line : Files.readAllLines(eventsFile())) {
        names.add(JSON.readTree(line).get("event").asText());
      }
      return names;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private JsonNode lastEvent(String name) throws IOException {
    JsonNode found = null;
    for (String line : Files.readAllLines(eventsFile())) {
      JsonNode node = JSON.readTree(line);
      if (node.get("event").asText().equals(name)) {
        found = node;
      }
    }
    assertThat(found).as("event %s in %s", name, events()).isNotNull();
    return found;
  }

  private int resetsRun() throws IOException {
    return Files.exists(marker()) ? Files.readAllLines(marker()).size() : 0;
  }

  private void writeAndClose(String bytes) throws IOException {
    try (FileOutputStream out = new FileOutputStream(fifo().toFile())) {
      out.write(bytes.getBytes(StandardCharsets.US_ASCII));
    }
  }

  @Test
  void feedsAreSeenAndMagicCloseDisarms() throws Exception {
    EmulatedWatchdog watchdog = start(Duration.ofMillis(400), false);
    assertThat(Files.getAttribute(fifo(), "unix:mode", LinkOption.NOFOLLOW_LINKS)).isNotNull();

    writeAndClose("kkkV");

    await().atMost(Duration.ofSeconds(5)).until(() -> events().contains("disarmed"));
    assertThat(events()).containsSubsequence("started", "armed", "feed", "disarmed");
    assertThat(lastEvent("feed").get("count").asLong()).isPositive();
    assertThat(lastEvent("disarmed").get("total").asLong()).isEqualTo(4);
    await().during(Duration.ofMillis(1000)).atMost(Duration.ofSeconds(3)).until(() -> !events().contains("reset"));
    assertThat(resetsRun()).isZero();
    assertThat(watchdog.running()).isFalse();
    assertThat(stdout.toString(StandardCharsets.UTF_8)).contains("\"event\":\"disarmed\"");
  }

  @Test
  void closeWithoutMagicKeepsTheTimerRunningAndStarvationResetsOnce() throws Exception {
    EmulatedWatchdog watchdog = start(Duration.ofMillis(300), false);

    writeAndClose("k");

    await().atMost(Duration.ofSeconds(5)).until(() -> resetsRun() == 1);
    assertThat(events()).containsSubsequence("armed", "closed", "reset");
    JsonNode closed = lastEvent("closed");
    assertThat(closed.get("magic").asBoolean()).isFalse();
    assertThat(closed.get("running").asBoolean()).isTrue();
    await().atMost(Duration.ofSeconds(5)).until(() -> events().contains("reset-exit"));
    assertThat(lastEvent("reset-exit").get("exitCode").asInt()).isZero();
    await().during(Duration.ofMillis(900)).atMost(Duration.ofSeconds(3)).until(() -> resetsRun() == 1);
    assertThat(watchdog.resets()).isEqualTo(1);
  }

  @Test
  void nowayoutIgnoresMagicClose() throws Exception {
    start(Duration.ofMillis(300), true);

    writeAndClose("V");

    await().atMost(Duration.ofSeconds(5)).until(() -> resetsRun() == 1);
    JsonNode closed = lastEvent("closed");
    assertThat(closed.get("magic").asBoolean()).isTrue();
    assertThat(closed.get("nowayout").asBoolean()).isTrue();
    assertThat(events()).doesNotContain("disarmed");
  }

  @Test
  void theNextOpenAfterAResetArmsAgain() throws Exception {
    start(Duration.ofMillis(300), false);
    writeAndClose("k");
    await().atMost(Duration.ofSeconds(5)).until(() -> resetsRun() == 1);

    writeAndClose("kV");

    await().atMost(Duration.ofSeconds(5)).until(() -> events().contains("disarmed"));
    assertThat(events()).containsSubsequence("reset", "armed", "disarmed");
  }

  @Test
  void reopeningWhileTheTimerRunsContinuesIt() throws Exception {
    start(Duration.ofSeconds(3), false);
    writeAndClose("k");
    await().atMost(Duration.ofSeconds(2)).until(() -> events().contains("closed"));

    writeAndClose("V");

    await().atMost(Duration.ofSeconds(2)).until(() -> events().contains("disarmed"));
    assertThat(events()).containsSubsequence("armed", "closed", "reopen", "disarmed");
    assertThat(resetsRun()).isZero();
  }

  @Test
  void regularFeedingKeepsTheTimerFromExpiring() throws Exception {
    EmulatedWatchdog watchdog = start(Duration.ofSeconds(2), false);
    ScheduledExecutorService feeder = Executors.newSingleThreadScheduledExecutor();
    toClose.add(feeder::shutdownNow);
    FileOutputStream out = new FileOutputStream(fifo().toFile());
    try {
      feeder.scheduleAtFixedRate(() -> {
        try {
          out.write('k');
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }, 0, 100, TimeUnit.MILLISECONDS);

      // Feeds every 100 ms against a 2 s timer, watched for more than twice the timeout; the slack in the timer
      // absorbs a feeder stalled by a loaded machine.
      await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10))
          .until(() -> watchdog.running() && watchdog.resets() == 0);
      feeder.shutdownNow();
      feeder.awaitTermination(2, TimeUnit.SECONDS);
      out.write('V');
    } finally {
      out.close();
    }

    await().atMost(Duration.ofSeconds(5)).until(() -> events().contains("disarmed"));
    assertThat(lastEvent("disarmed").get("total").asLong()).isGreaterThan(10);
    assertThat(resetsRun()).isZero();
  }

  @Test
  void somethingOtherThanAFifoAtThePathIsRefused() throws IOException {
    Files.writeString(fifo(), "not a fifo");
    WatchdogEventLog log = new WatchdogEventLog(new PrintStream(stdout, true, StandardCharsets.UTF_8), null,
        InstantSource.system());
    EmulatedWatchdog watchdog = new EmulatedWatchdog(fifo(), Duration.ofSeconds(1), false, "true", log);

    assertThatThrownBy(watchdog::start).isInstanceOf(IOException.class).hasMessageContaining("is not a FIFO");
    assertThat(Files.readString(fifo())).isEqualTo("not a fifo");
  }
}
