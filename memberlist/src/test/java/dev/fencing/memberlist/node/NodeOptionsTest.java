package dev.fencing.memberlist.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeOptionsTest {

  @Test
  void flagsOverrideTheChosenBaseConfig() {
    String key = Base64.getEncoder().encodeToString(new byte[16]);
    NodeOptions o =
        NodeOptions.parse(
            new String[] {
              "--name", "n1", "--bind", "127.0.0.1", "--port", "0", "--join", "127.0.0.1:7946, 127.0.0.1:7947",
              "--config", "local", "--probe-interval", "1.5s", "--suspicion-mult=5", "--key", key,
              "--compression", "false", "--state", "s1", "--meta", "m1"
            });
    assertThat(o.config().name()).isEqualTo("n1");
    assertThat(o.config().bindPort()).isZero();
    assertThat(o.config().probeInterval()).isEqualTo(Duration.ofMillis(1500));
    assertThat(o.config().probeTimeout()).isEqualTo(Duration.ofMillis(200)); // from local
    assertThat(o.config().suspicionMult()).isEqualTo(5);
    assertThat(o.config().enableCompression()).isFalse();
    assertThat(o.config().encryptionEnabled()).isTrue();
    assertThat(o.join()).containsExactly("127.0.0.1:7946", "127.0.0.1:7947");
    assertThat(o.state()).isEqualTo("s1");
    assertThat(o.meta()).isEqualTo("m1");
  }

  @Test
  void skipInboundLabelCheckIsABooleanFlagInGoStyle() {
    NodeOptions bare =
        NodeOptions.parse(new String[] {"--name", "n1", "--label", "g", "--skip-inbound-label-check", "--port", "0"});
    assertThat(bare.config().skipInboundLabelCheck()).isTrue();
    assertThat(bare.config().packetOptions().skipInboundLabelCheck()).isTrue();
    assertThat(bare.config().bindPort()).isZero();
    assertThat(NodeOptions.parse(new String[] {"--name", "n1", "--skip-inbound-label-check=false"})
            .config().skipInboundLabelCheck()).isFalse();
    assertThat(NodeOptions.parse(new String[] {"--name", "n1"}).config().skipInboundLabelCheck()).isFalse();
  }

  @Test
  void badInputIsRejectedWithTheFlagNamed() {
    assertThatThrownBy(() -> NodeOptions.parse(new String[] {"--port", "1"})).hasMessageContaining("--name");
    assertThatThrownBy(() -> NodeOptions.parse(new String[] {"--name", "a", "--port", "x"})).hasMessageContaining("--port");
    assertThatThrownBy(() -> NodeOptions.parse(new String[] {"--name", "a", "--probe-interval", "5 parsecs"}))
        .hasMessageContaining("--probe-interval");
    assertThatThrownBy(() -> NodeOptions.parse(new String[] {"--name", "a", "--key", "AAAA"})).hasMessageContaining("16, 24 or 32");
    assertThatThrownBy(() -> NodeOptions.parse(new String[] {"--name", "a", "--config", "moon"})).hasMessageContaining("lan, wan or local");
    assertThatThrownBy(() -> NodeOptions.parse(new String[] {"--name", "a", "--bogus", "1"})).hasMessageContaining("--bogus");
  }

  @Test
  void goDurationsParse() {
    assertThat(GoDuration.parse("200ms")).isEqualTo(Duration.ofMillis(200));
    assertThat(GoDuration.parse("1m30s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(GoDuration.parse("0")).isEqualTo(Duration.ZERO);
    assertThat(GoDuration.parse("2h")).isEqualTo(Duration.ofHours(2));
  }

  @Test
  void jsonLinesRoundTripEscapes() {
    String line = JsonLine.event(5, "user").string("msg", "a \"q\" \\ \n").strings("alive", List.of("x", "y")).toString();
    assertThat(line).isEqualTo("{\"ts\":5,\"event\":\"user\",\"msg\":\"a \\\"q\\\" \\\\ \\n\",\"alive\":[\"x\",\"y\"]}");
    Map<String, String> cmd = JsonLine.parse("{\"send\":\"b\", \"msg\":\"hi \\u00e9\\\"\", \"reliable\":true}");
    assertThat(cmd).containsEntry("send", "b").containsEntry("msg", "hi é\"").containsEntry("reliable", "true");
    assertThatThrownBy(() -> JsonLine.parse("{\"send\":[1]}")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> JsonLine.parse("{\"send\":\"b\"")).isInstanceOf(IllegalArgumentException.class);
  }
}
