package dev.fencing.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.DisarmReason;
import dev.fencing.proto.fencing.v1.Event;
import dev.fencing.proto.fencing.v1.EventType;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.fencing.v1.Node;
import dev.fencing.proto.fencing.v1.PeerMemberState;
import dev.fencing.proto.fencing.v1.PeerStatus;
import dev.fencing.proto.fencing.v1.TieBreaker;
import dev.fencing.proto.fencing.v1.Timings;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The {@code --json} output against files recorded from the earlier hand-written mapper (src/test/resources/proto-json):
 * the JSON values must stay the same; only insignificant whitespace in the indented form differs.
 */
class ProtoJsonTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  static AgentStatus richStatus() {
    return AgentStatus.newBuilder()
        .setNode("node-a").setGroup("workers").setAgentVersion("1.2.3")
        .setMode(FencingMode.FENCING_MODE_WATCHDOG).addTieBreakers(TieBreaker.TIE_BREAKER_CONTROL_PLANE)
        .setArmed(true).setExpected(3).setHeard(2).setQuorumSize(2)
        .addPeers(PeerStatus.newBuilder().setName("node-b").setMemberState(PeerMemberState.PEER_MEMBER_STATE_ALIVE)
            .setConfirmed(true).setSinceLastHeard(Duration.newBuilder().setNanos(250_000_000))
            .putAddresses("ip", "10.0.0.2"))
        .addDisarmReasons(DisarmReason.newBuilder().setKind(DisarmReason.Kind.KIND_MAINTENANCE).setDetail("x"))
        .setSinceLastFeed(Duration.newBuilder().setSeconds(1).setNanos(1500))
        .setFeedsTotal(-1L) // uint64 max
        .setConfigRevision(7)
        .setTimings(Timings.newBuilder().setProfile("fast").setLocalHealthCap(2)
            .setQuorumWindow(Duration.newBuilder().setSeconds(-3).setNanos(-250_000_000)))
        .build();
  }

  static Event richEvent() {
    return Event.newBuilder()
        .setNode(Node.newBuilder().setName("node-b").putAddresses("ip", "10.0.0.2")
            .setPrevDisconnectTime(Timestamp.newBuilder().setSeconds(1_700_000_000).setNanos(120_000_000)))
        .setTime(Timestamp.newBuilder().setSeconds(1_700_000_001))
        .setType(EventType.LEFT)
        .setSourceName("gossip")
        .build();
  }

  @Test
  void prettyStatusHasTheSameValuesAsTheEarlierMapper() throws IOException {
    assertThat(MAPPER.readTree(ProtoJson.pretty(richStatus()))).isEqualTo(recorded("status-pretty.json"));
  }

  @Test
  void defaultStatusStillPrintsFieldsWithoutPresence() throws IOException {
    JsonNode json = MAPPER.readTree(ProtoJson.pretty(AgentStatus.getDefaultInstance()));

    assertThat(json).isEqualTo(recorded("default-status-pretty.json"));
    assertThat(json.get("armed").asBoolean()).isFalse();
    assertThat(json.has("sinceLastFeed")).isFalse();
    assertThat(json.has("timings")).isFalse();
  }

  @Test
  void eventLineIsOneCompactLineWithTheSameValues() throws IOException {
    String line = ProtoJson.line(richEvent());

    assertThat(line).doesNotContain("\n").doesNotContain(": ");
    assertThat(line).isEqualTo(recordedText("event-line.json").strip());
    assertThat(ProtoJson.line(Event.getDefaultInstance())).isEqualTo(recordedText("default-event-line.json").strip());
  }

  @Test
  void unsignedAndSixtyFourBitIntegersFollowTheProto3Mapping() throws IOException {
    JsonNode json = MAPPER.readTree(ProtoJson.line(AgentStatus.newBuilder().setFeedsTotal(-1L).setExpected(-1)));

    assertThat(json.get("feedsTotal").isTextual()).isTrue();
    assertThat(json.get("feedsTotal").asText()).isEqualTo("18446744073709551615");
    assertThat(json.get("expected").asLong()).isEqualTo(4294967295L);
  }

  private static JsonNode recorded(String name) throws IOException {
    return MAPPER.readTree(recordedText(name));
  }

  private static String recordedText(String name) throws IOException {
    try (InputStream in = ProtoJsonTest.class.getResourceAsStream("/proto-json/" + name)) {
      assertThat(in).as("test resource %s", name).isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
