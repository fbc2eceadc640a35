package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.StandaloneConfigLoader;
import dev.fencing.agent.watchdog.RecordingWatchdogDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The host status file of a running agent follows arming and the disable file, as the bashible step reads it. */
class HostStatusFileTest {

  @TempDir Path dir;

  private static Map<String, String> read(Path file) throws IOException {
    Map<String, String> out = new LinkedHashMap<>();
    if (!Files.exists(file)) {
      return out;
    }
    for (String line : Files.readAllLines(file)) {
      int eq = line.indexOf('=');
      if (!line.startsWith("#") && eq > 0) {
        out.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    return out;
  }

  @Test
  void theStatusFileSaysArmedThenDisarmedByTheDisableFileThenStopped() throws Exception {
    String yaml = "group: solo\nexpected:\n  - {name: node-a, address: 127.0.0.1:" + LoopbackPorts.free() + "}\n"
        + "fencing:\n  mode: Watchdog\n  watchdog: {timeout: 5s}\n  quorum: {tieBreakers: []}\n  timings: "
        + AgentCluster.FAST_TIMINGS + "\n";
    AgentConfig config = AgentConfig.fromStandalone(StandaloneConfigLoader.parse("solo.yaml", yaml), "node-a",
        "solo.yaml");
    Path status = dir.resolve("run/status");
    Path disable = dir.resolve("disable");
    AgentRuntime runtime = AgentRuntime.start(new AgentRuntime.Options("node-a", Optional.of(config),
        Optional.empty(), dir.resolve("agent.sock"), new RecordingWatchdogDevice(), disable, dir.resolve("state"), 0,
        Optional.empty(), Optional.empty(), "test", Optional.empty(), true, Optional.of(status)));
    try {
      await().atMost(Duration.ofSeconds(15)).until(() -> "true".equals(read(status).get("armed")));
      Map<String, String> armed = read(status);
      assertThat(armed).containsEntry("version", "1").containsEntry("node", "node-a").containsEntry("group", "solo")
          .containsEntry("pid", Long.toString(ProcessHandle.current().pid())).containsEntry("reasons", "none")
          .containsEntry("disable_file", "absent").containsEntry("quorum", "held").containsEntry("revision", "0");
      assertThat(armed.keySet()).containsExactly("version", "node", "group", "pid", "armed", "reasons",
          "disable_file", "quorum", "revision", "updated_unix");
      long created = System.currentTimeMillis() / 1000;

      Files.writeString(disable, "maintenance\n");
      await().atMost(Duration.ofSeconds(5)).until(() -> "present".equals(read(status).get("disable_file"))
          && "false".equals(read(status).get("armed")));
      assertThat(read(status)).containsEntry("reasons", "DISABLE_FILE");
      assertThat(Long.parseLong(read(status).get("updated_unix"))).isGreaterThanOrEqualTo(created);

      Files.delete(disable);
      await().atMost(Duration.ofSeconds(15)).until(() -> "true".equals(read(status).get("armed"))
          && "absent".equals(read(status).get("disable_file")));
    } finally {
      runtime.close();
    }
    assertThat(read(status)).containsEntry("armed", "false").containsEntry("reasons", "SHUTTING_DOWN");
  }

  @Test
  void theStatusFileFlagDefaultsToTheContractPathAndAnEmptyValueTurnsItOff() {
    RunCommand defaults = new RunCommand();
    new picocli.CommandLine(defaults).parseArgs("--node", "node-a");
    assertThat(RunCommand.statusFile(defaults.statusFile)).hasValue(Path.of("/var/run/fencing-agent/status"));

    RunCommand off = new RunCommand();
    new picocli.CommandLine(off).parseArgs("--node", "node-a", "--status-file=");
    assertThat(RunCommand.statusFile(off.statusFile)).isEmpty();
  }
}
