package dev.fencing.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Duration;
import dev.fencing.agent.api.EventHub;
import dev.fencing.agent.api.LocalApiServer;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.DisarmReason;
import dev.fencing.proto.fencing.v1.EventType;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.fencing.v1.PeerMemberState;
import dev.fencing.proto.fencing.v1.PeerStatus;
import dev.fencing.proto.fencing.v1.QuorumLossAction;
import dev.fencing.proto.fencing.v1.TieBreaker;
import dev.fencing.proto.fencing.v1.Timings;
import io.grpc.Status;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client subcommands against a real LocalApiServer on a Unix socket. */
class FencingAgentCliTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private Path socket;
  private EventHub hub;
  private final AtomicReference<AgentStatus> status = new AtomicReference<>();
  private LocalApiServer server;

  @BeforeEach
  void startAgentApi() throws IOException {
    socket = dir.resolve("agent.sock");
    hub = new EventHub(64, InstantSource.fixed(T0));
    hub.publish(EventType.JOIN, "node-a", Map.of("InternalIP", "198.18.0.1"), T0, "gossip");
    hub.publish(EventType.JOIN, "node-b", Map.of("InternalIP", "198.18.0.2", "eth1", "198.19.0.2"), T0, "gossip");
    hub.publish(EventType.LEFT, "node-b", Map.of(), T0.plusSeconds(4), "gossip");
    hub.publish(EventType.JOIN, "node-b", Map.of("InternalIP", "198.18.0.2"), T0.plusSeconds(8), "gossip");
    server = new LocalApiServer(socket, hub, status::get);
    server.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private static CliRun run(String... args) {
    return CliRun.of(args);
  }

  @Test
  void membersPrintsATable() {
    CliRun run = run("members", "--socket", socket.toString());

    assertThat(run.code()).isEqualTo(ExitCodes.OK);
    assertThat(run.out()).isEqualTo("""
        NAME    ADDRESSES              PREV-DISCONNECT
        node-a  InternalIP=198.18.0.1  -
        node-b  InternalIP=198.18.0.2  2026-11-22T10:00:04Z
        2 members
        """);
  }

  @Test
  void membersJsonUsesTheProto3Mapping() throws IOException {
    CliRun run = run("members", "--socket", socket.toString(), "--json");

    assertThat(run.code()).isEqualTo(ExitCodes.OK);
    JsonNode nodes = JSON.readTree(run.out()).get("nodes");
    assertThat(nodes).hasSize(2);
    assertThat(nodes.get(0).get("name").asText()).isEqualTo("node-a");
    assertThat(nodes.get(0).has("prevDisconnectTime")).isFalse();
    assertThat(nodes.get(1).get("addresses").get("InternalIP").asText()).isEqualTo("198.18.0.2");
    assertThat(nodes.get(1).get("prevDisconnectTime").asText()).isEqualTo("2026-11-22T10:00:04Z");
  }

  @Test
  void eventsPrintsTheSnapshotThenLiveChangesUntilCount() throws Exception {
    CompletableFuture<CliRun> events = CompletableFuture.supplyAsync(
        () -> run("events", "--socket", socket.toString(), "--count", "3"));
    await().atMost(java.time.Duration.ofSeconds(10)).until(() -> hub.subscriberCount() == 1);

    hub.publish(EventType.LEFT, "node-a", Map.of(), T0.plusSeconds(20), "gossip");

    CliRun run = events.get(10, TimeUnit.SECONDS);
    assertThat(run.code()).isEqualTo(ExitCodes.OK);
    assertThat(run.out()).isEqualTo("""
        2026-11-22T10:00:00Z  JOIN  node-a  InternalIP=198.18.0.1  source=snapshot
        2026-11-22T10:00:00Z  JOIN  node-b  InternalIP=198.18.0.2  source=snapshot
        2026-11-22T10:00:20Z  LEFT  node-a  InternalIP=198.18.0.1  source=gossip
        """);
  }

  @Test
  void eventsJsonPrintsOneObjectPerLine() throws IOException {
    CliRun run = run("events", "--socket", socket.toString(), "--json", "--count", "2");

    assertThat(run.code()).isEqualTo(ExitCodes.OK);
    String[] lines = run.out().split("\n");
    assertThat(lines).hasSize(2);
    JsonNode second = JSON.readTree(lines[1]);
    assertThat(second.get("type").asText()).isEqualTo("JOIN");
    assertThat(second.get("sourceName").asText()).isEqualTo("snapshot");
    assertThat(second.get("node").get("prevDisconnectTime").asText()).isEqualTo("2026-11-22T10:00:04Z");
    assertThat(second.get("time").asText()).isEqualTo("2026-11-22T10:00:00Z");
  }

  @Test
  void eventsStopsCleanlyAtTimeout() {
    CliRun run = run("events", "--socket", socket.toString(), "--timeout", "300ms");

    assertThat(run.code()).isEqualTo(ExitCodes.OK);
    assertThat(run.out().lines()).hasSize(2);
    assertThat(run.err()).isEmpty();
  }

  @Test
  void eventsEndsWithNoAgentWhenTheAgentShutsDown() throws Exception {
    CompletableFuture<CliRun> events = CompletableFuture.supplyAsync(() -> run("events", "--socket", socket.toString()));
    await().atMost(java.time.Duration.ofSeconds(10)).until(() -> hub.subscriberCount() == 1);

    server.close();

    CliRun run = events.get(10, TimeUnit.SECONDS);
    assertThat(run.code()).isEqualTo(ExitCodes.NO_AGENT);
    assertThat(run.err()).contains("shutting down");
  }

  @Test
  void statusPrintsASummaryAndPeers() {
    status.set(sampleStatus());

    CliRun run = run("status", "--socket", socket.toString());

    assertThat(run.code()).isEqualTo(ExitCodes.OK);
    assertThat(run.out())
        .contains("node-a (group workers, agent 0.1.0)")
        .contains("Watchdog, quorum loss action Fence, tie-breakers LowestName")
        .containsPattern("armed: +no\n")
        .containsPattern("watchdog feeds: +42, last 3s ago\n")
        .contains("DisableFile \"kernel upgrade\"")
        .contains("NOT held (heard 1 of 3 expected, quorum 2, tie-breaker none)")
        .contains("T_stop 6s")
        .contains("safe-to-assume-fenced after 1m8s")
        .containsPattern("node-b +Dead +no +4.5s ago +250ms ago +no +InternalIP=198.18.0.2");
  }

  @Test
  void statusJsonPrintsEveryFieldOfThePeerList() throws IOException {
    status.set(sampleStatus());

    CliRun run = run("status", "--socket", socket.toString(), "--json");

    JsonNode json = JSON.readTree(run.out());
    assertThat(json.get("mode").asText()).isEqualTo("FENCING_MODE_WATCHDOG");
    assertThat(json.get("armed").asBoolean()).isFalse();
    assertThat(json.get("feedsTotal").asText()).isEqualTo("42");
    assertThat(json.get("expected").asInt()).isEqualTo(3);
    assertThat(json.get("timings").get("tStop").asText()).isEqualTo("6s");
    assertThat(json.get("peers").get(0).get("sinceLastConfirmed").asText()).isEqualTo("4.500s");
  }

  @Test
  void statusBeforeTheAgentHasOneSaysSo() {
    CliRun run = run("status", "--socket", socket.toString());

    assertThat(run.code()).isEqualTo(ExitCodes.AGENT_ERROR);
    assertThat(run.err()).contains("FAILED_PRECONDITION").contains("no status yet");
  }

  @Test
  void missingSocketSaysThereIsNoAgent() {
    Path absent = dir.resolve("absent.sock");

    CliRun run = run("members", "--socket", absent.toString());

    assertThat(run.code()).isEqualTo(ExitCodes.NO_AGENT);
    assertThat(run.err()).isEqualTo(
        "no agent at " + absent + ": is fencing-agent running? (--socket to choose another)\n");
  }

  @Test
  void staleSocketNobodyAnswersSaysThereIsNoAgent() throws IOException {
    Path stale = dir.resolve("stale.sock");
    try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      dead.bind(UnixDomainSocketAddress.of(stale));
    }

    CliRun run = run("status", "--socket", stale.toString());

    assertThat(run.code()).isEqualTo(ExitCodes.NO_AGENT);
    assertThat(run.err()).startsWith("no agent at " + stale + ": is fencing-agent running?");
  }

  @Test
  void aDroppedStreamAndOtherAgentErrorsMapToTheirExitCodes() {
    StringWriter err = new StringWriter();
    PrintWriter errWriter = new PrintWriter(err, true);
    try (AgentConnection agent = AgentConnection.open(socket, errWriter)) {
      assertThat(agent.fail(Status.RESOURCE_EXHAUSTED.withDescription("fell behind").asRuntimeException(), errWriter))
          .isEqualTo(ExitCodes.STREAM_DROPPED);
      assertThat(agent.fail(Status.INTERNAL.withDescription("bug").asRuntimeException(), errWriter))
          .isEqualTo(ExitCodes.AGENT_ERROR);
      assertThat(agent.fail(Status.DEADLINE_EXCEEDED.asRuntimeException(), errWriter))
          .isEqualTo(ExitCodes.NO_AGENT);
    }
    assertThat(err.toString()).contains("dropped this event stream because the client fell behind: fell behind")
        .contains("answered INTERNAL: bug");
  }

  @Test
  void badArgumentsAreUsageErrors() {
    assertThat(run("events", "--socket", socket.toString(), "--count", "0").code()).isEqualTo(ExitCodes.USAGE);
    assertThat(run("events", "--timeout", "soon").code()).isEqualTo(ExitCodes.USAGE);
    assertThat(run("no-such-command").code()).isEqualTo(ExitCodes.USAGE);
  }

  @Test
  void runWarnsAtStartWhenTheStandaloneConfigHasNoGossipKeysAndSaysWhetherItWillArm() throws Exception {
    Path config = dir.resolve("plain.yaml");
    java.nio.file.Files.writeString(config, "group: g\nexpected:\n  - {name: node-a, address: 127.0.0.1:7946}\n"
        + "fencing:\n  mode: Watchdog\n  quorum: {tieBreakers: [LowestName]}\n");
    // An unparsable --bind stops run right after the config was loaded, before anything binds.
    CliRun refused = run("run", "--config", config.toString(), "--node", "node-a", "--bind", "127.0.0.1:x");
    CliRun allowed = run("run", "--config", config.toString(), "--node", "node-a", "--bind", "127.0.0.1:x",
        "--allow-plaintext-gossip");

    assertThat(refused.err()).contains("no gossip.keys").contains("the watchdog will not arm")
        .contains("--allow-plaintext-gossip");
    assertThat(allowed.err()).contains("no gossip.keys").contains("running anyway (--allow-plaintext-gossip)");
    assertThat(allowed.code()).isEqualTo(ExitCodes.USAGE);
  }

  @Test
  void runIsASubcommandThatRequiresANode() {
    CliRun run = run("run", "--config", dir.resolve("absent.yaml").toString());

    assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
    assertThat(run.err()).contains("--node");
  }

  @Test
  void humanDurationsAreRoundedToMillisecondsOrMicroseconds() {
    assertThat(HumanFormat.duration(seconds(0, 700_586_447))).isEqualTo("701ms");
    assertThat(HumanFormat.duration(seconds(4, 125_861_203))).isEqualTo("4.126s");
    assertThat(HumanFormat.duration(seconds(0, 179_532))).isEqualTo("180us");
    assertThat(HumanFormat.duration(seconds(90, 0))).isEqualTo("1m30s");
    assertThat(HumanFormat.duration(seconds(0, 0))).isEqualTo("0s");
  }

  @Test
  void softdogEmulatorIsASubcommand() {
    CliRun run = run("softdog-emulator", "--help");

    assertThat(run.code()).isZero();
    assertThat(run.out()).contains("--nowayout").contains("--reset-command");
  }

  private static Duration seconds(long s, int nanos) {
    return Duration.newBuilder().setSeconds(s).setNanos(nanos).build();
  }

  private static AgentStatus sampleStatus() {
    return AgentStatus.newBuilder()
        .setNode("node-a").setGroup("workers").setAgentVersion("0.1.0")
        .setMode(FencingMode.FENCING_MODE_WATCHDOG)
        .setQuorumLossAction(QuorumLossAction.QUORUM_LOSS_ACTION_FENCE)
        .addTieBreakers(TieBreaker.TIE_BREAKER_LOWEST_NAME)
        .setArmed(false).setQuorumHeld(false).setExpected(3).setHeard(1).setQuorumSize(2)
        .setTieBreakerOutcome("none").setFeedsTotal(42).setSinceLastFeed(seconds(3, 0))
        .addDisarmReasons(DisarmReason.newBuilder().setKind(DisarmReason.Kind.KIND_DISABLE_FILE)
            .setDetail("kernel upgrade"))
        .addPeers(PeerStatus.newBuilder().setName("node-b").setMemberState(PeerMemberState.PEER_MEMBER_STATE_DEAD)
            .setSinceLastConfirmed(seconds(4, 500_000_000)).setSinceLastHeard(seconds(0, 250_000_000))
            .putAddresses("InternalIP", "198.18.0.2"))
        .setTimings(Timings.newBuilder().setProfile("Medium").setTStop(seconds(6, 0))
            .setSafeToAssumeFencedDelay(seconds(68, 0)).setWatchdogTimeout(seconds(60, 0)))
        .setConfigRevision(7).setConfigSource("file")
        .build();
  }
}
