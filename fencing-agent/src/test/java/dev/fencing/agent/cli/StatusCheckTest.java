package dev.fencing.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.DisarmReason;
import dev.fencing.proto.fencing.v1.FencingMode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code status --check} exit codes, and the default socket's fallback, against a real LocalApiServer. */
class StatusCheckTest {

  @TempDir Path dir;
  @RegisterExtension final FakeAgentApi agent = new FakeAgentApi();

  private static CliRun run(Object command, String... args) {
    return CliRun.of(command, args);
  }

  private CliRun check() {
    return run(FencingAgentCli.commandLine().getCommand(), "status", "--check", "--socket", agent.socket().toString());
  }

  private static AgentStatus.Builder held(int heard) {
    return AgentStatus.newBuilder().setNode("node-a").setGroup("workers").setMode(FencingMode.FENCING_MODE_WATCHDOG)
        .setExpected(3).setQuorumSize(2).setHeard(heard).setQuorumHeld(heard >= 2);
  }

  private static DisarmReason reason(DisarmReason.Kind kind, String detail) {
    return DisarmReason.newBuilder().setKind(kind).setDetail(detail).build();
  }

  @Test
  void theSharedDiskConditionIsShownOnlyForAGroupWithADisk() {
    assertThat(StatusCommand.text(held(3).setDiskCondition("poison pill: reset from vm").build()))
        .contains("shared disk:").contains("poison pill: reset from vm");
    assertThat(StatusCommand.text(held(3).setDiskCondition("none").build())).doesNotContain("shared disk:");
  }

  @Test
  void armedWithQuorumIsZero() {
    agent.status.set(held(3).setArmed(true).build());

    CliRun run = check();

    assertThat(run.code()).isEqualTo(StatusCommand.CHECK_OK);
    assertThat(run.out()).isEqualTo("ok: armed, quorum held (heard 3 of 3 expected, quorum 2)\n");
  }

  @Test
  void disarmedOnlyOnPurposeIsZero() {
    agent.status.set(held(3).addDisarmReasons(reason(DisarmReason.Kind.KIND_DISABLE_FILE, "kernel update"))
        .addDisarmReasons(reason(DisarmReason.Kind.KIND_MAINTENANCE, "update.node.deckhouse.io/approved")).build());

    CliRun run = check();

    assertThat(run.code()).isEqualTo(StatusCommand.CHECK_OK);
    assertThat(run.out()).startsWith("ok: disarmed on purpose (DisableFile \"kernel update\"; Maintenance")
        .hasLineCount(1);
  }

  @Test
  void notArmedForAnotherReasonIsOne() {
    agent.status.set(held(2).addDisarmReasons(reason(DisarmReason.Kind.KIND_WATCHDOG_UNAVAILABLE,
        "missing: /host/dev/watchdog not found")).build());
    CliRun unavailable = check();
    assertThat(unavailable.code()).isEqualTo(StatusCommand.CHECK_NOT_ARMED);
    assertThat(unavailable.out()).startsWith("not armed: WatchdogUnavailable \"missing:").hasLineCount(1);

    agent.status.set(held(3).addDisarmReasons(reason(DisarmReason.Kind.KIND_DISABLE_FILE, ""))
        .addDisarmReasons(reason(DisarmReason.Kind.KIND_NO_GOSSIP_KEY, "no keyring")).build());
    assertThat(check().code()).as("on purpose and another reason").isEqualTo(StatusCommand.CHECK_NOT_ARMED);

    agent.status.set(AgentStatus.newBuilder().setNode("node-a")
        .addDisarmReasons(reason(DisarmReason.Kind.KIND_NO_CONFIG, "no configuration yet")).build());
    CliRun noConfig = check();
    assertThat(noConfig.code()).isEqualTo(StatusCommand.CHECK_NOT_ARMED);
    assertThat(noConfig.out()).startsWith("not armed: NoConfig");
  }

  @Test
  void quorumNotHeldIsTwo() {
    agent.status.set(held(1).setArmed(true).setFencingInProgress(true).build());

    CliRun run = check();

    assertThat(run.code()).isEqualTo(StatusCommand.CHECK_NO_QUORUM);
    assertThat(run.out()).isEqualTo("quorum not held: heard 1 of 3 expected, quorum 2; fencing in progress\n");
  }

  @Test
  void noAgentIsThreeWithTheLineOnStdout() {
    Path absent = dir.resolve("absent.sock");

    CliRun run = run(FencingAgentCli.commandLine().getCommand(), "status", "--check", "--socket", absent.toString());

    assertThat(run.code()).isEqualTo(ExitCodes.NO_AGENT);
    assertThat(run.out()).startsWith("no agent at " + absent).hasLineCount(1);
  }

  @Test
  void withoutSocketTheDefaultIsUsedWhenItExistsElseTheFallback() {
    agent.status.set(held(3).setArmed(true).build());
    Path missing = dir.resolve("missing.sock");

    StatusCommand viaFallback = new StatusCommand();
    viaFallback.options.defaults = new AgentSocketOptions.SocketDefaults(missing, agent.socket());
    assertThat(run(viaFallback, "--check").code()).as("default missing: the fallback answers")
        .isEqualTo(StatusCommand.CHECK_OK);

    StatusCommand viaDefault = new StatusCommand();
    viaDefault.options.defaults = new AgentSocketOptions.SocketDefaults(agent.socket(), missing);
    assertThat(run(viaDefault, "--check").code()).as("default exists: used").isEqualTo(StatusCommand.CHECK_OK);

    StatusCommand explicit = new StatusCommand();
    explicit.options.defaults = new AgentSocketOptions.SocketDefaults(agent.socket(), agent.socket());
    CliRun run = run(explicit, "--check", "--socket", missing.toString());
    assertThat(run.code()).as("--socket is never replaced").isEqualTo(ExitCodes.NO_AGENT);
    assertThat(run.out()).contains(missing.toString());
  }

  @Test
  void checkAndJsonTogetherAreAUsageError() {
    agent.status.set(held(3).setArmed(true).build());

    CliRun run = run(FencingAgentCli.commandLine().getCommand(), "status", "--check", "--json", "--socket",
        agent.socket().toString());

    assertThat(run.code()).isEqualTo(ExitCodes.STATUS_USAGE).isNotEqualTo(StatusCommand.CHECK_NO_QUORUM);
    assertThat(run.err()).contains("drop --json");
  }

  @Test
  void aMistypedOptionIsAUsageErrorNotQuorumLost() {
    CliRun run = run(FencingAgentCli.commandLine().getCommand(), "status", "--check", "--sokcet",
        agent.socket().toString());

    assertThat(run.code()).isEqualTo(ExitCodes.STATUS_USAGE);
    assertThat(run.err()).contains("--sokcet");
  }
}
