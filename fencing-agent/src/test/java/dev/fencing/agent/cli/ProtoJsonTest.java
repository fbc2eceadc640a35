package dev.fencing.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.Duration;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.Timings;
import org.junit.jupiter.api.Test;

class ProtoJsonTest {

  @Test
  void followsTheProto3MappingAndPrintsFieldsWithoutPresence() {
    AgentStatus status = AgentStatus.newBuilder()
        .setNode("node-a")
        .setFeedsTotal(-1L) // uint64 max
        .setExpected(-1) // uint32 max
        .setTimings(Timings.newBuilder().setLocalHealthCap(1.5).setQuorumWindow(Duration.newBuilder().setSeconds(2)))
        .build();

    JsonNode json = ProtoJson.toJson(status);

    assertThat(json.get("feedsTotal").asText()).isEqualTo("18446744073709551615");
    assertThat(json.get("expected").asLong()).isEqualTo(4294967295L);
    assertThat(json.get("armed").asBoolean()).isFalse();
    assertThat(json.get("mode").asText()).isEqualTo("FENCING_MODE_UNSPECIFIED");
    assertThat(json.get("peers").isArray()).isTrue();
    assertThat(json.has("sinceLastFeed")).isFalse();
    assertThat(json.get("timings").get("localHealthCap").asDouble()).isEqualTo(1.5);
    assertThat(json.get("timings").get("quorumWindow").asText()).isEqualTo("2s");
    assertThat(json.get("timings").has("tStop")).isFalse();
  }

  @Test
  void durationsUse036Or9FractionalDigits() {
    assertThat(ProtoJson.duration(Duration.newBuilder().setSeconds(1).setNanos(500_000_000).build()))
        .isEqualTo("1.500s");
    assertThat(ProtoJson.duration(Duration.newBuilder().setNanos(1_500).build())).isEqualTo("0.000001500s");
    assertThat(ProtoJson.duration(Duration.newBuilder().setNanos(2_000).build())).isEqualTo("0.000002s");
    assertThat(ProtoJson.duration(Duration.newBuilder().setSeconds(-3).setNanos(-250_000_000).build()))
        .isEqualTo("-3.250s");
  }
}
