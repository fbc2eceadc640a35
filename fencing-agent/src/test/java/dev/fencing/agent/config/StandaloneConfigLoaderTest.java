package dev.fencing.agent.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.policy.Mode;
import dev.fencing.policy.QuorumLossAction;
import dev.fencing.policy.TieBreakerKind;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StandaloneConfigLoaderTest {

  static final String THREE = """
      group: workers
      expected:
        - name: node-c
          address: 127.0.0.1:7948
        - name: node-a
          address: 127.0.0.1:7946
          addresses: {InternalIP: 10.0.0.5, eth1: 192.168.1.5}
        - name: node-b
          address: "[::1]:7947"
      fencing:
        mode: Watchdog
        watchdog: {timeout: 30s}
        quorumLossAction: Exclude
        profile: Critical
        quorum: {size: Auto, tieBreakers: [LowestName]}
        timings: {quorumWindow: 3s, localHealthCap: 2.0}
      """;

  @Test
  void parsesMembersPolicyAndTimings() throws Exception {
    StandaloneConfig config = StandaloneConfigLoader.parse("test.yaml", THREE);
    assertThat(config.group()).isEqualTo("workers");
    assertThat(config.members()).extracting(ExpectedMember::name).containsExactly("node-a", "node-b", "node-c");
    assertThat(config.member("node-a").orElseThrow().addresses())
        .isEqualTo(Map.of("InternalIP", "10.0.0.5", "eth1", "192.168.1.5"));
    assertThat(config.member("node-b").orElseThrow().gossipAddress()).isEqualTo("[::1]:7947");
    assertThat(config.policy().mode()).isEqualTo(Mode.WATCHDOG);
    assertThat(config.policy().quorumLossAction()).isEqualTo(QuorumLossAction.EXCLUDE);
    assertThat(config.policy().quorumSize()).isEqualTo(2);
    assertThat(config.policy().tieBreakers()).containsExactly(TieBreakerKind.LOWEST_NAME);
    assertThat(config.policy().timings().quorumWindow()).isEqualTo(Duration.ofSeconds(3));
    assertThat(config.policy().timings().watchdogTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(config.policy().timings().tStop()).isEqualTo(Duration.ofSeconds(6).plus(
        config.policy().timings().evaluationTick()));
  }

  @Test
  void typosAndTypeErrorsNameTheLineAndField() {
    assertThatThrownBy(() -> StandaloneConfigLoader.parse("f.yaml", THREE.replace("quorumLossAction:", "quorumLosAction:")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("line 13: fencing.quorumLosAction: unknown field 'quorumLosAction'");
    assertThatThrownBy(() -> StandaloneConfigLoader.parse("f.yaml", THREE.replace("localHealthCap: 2.0",
        "localHealthCap: lots")))
        .hasMessageContaining("line 16: fencing.timings.localHealthCap");
  }

  @Test
  void everySemanticProblemIsReportedWithWhatToChange() {
    String bad = """
        group: Workers!
        expected:
          - name: a
            address: 10.0.0.1
          - name: a
            address: 10.0.0.2:1
          - name: b
            address: 10.0.0.3:99999
        fencing:
          mode: Sometimes
          timings: {quorumWindow: soon}
        gossip:
          keys: [abc]
        """;
    assertThatThrownBy(() -> StandaloneConfigLoader.parse("bad.yaml", bad))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems()).hasSize(7).satisfies(p -> {
          assertThat(p.get(0)).startsWith("line 1: group: 'Workers!' must be a lowercase");
          assertThat(p.get(1)).startsWith("line 4: expected[0].address: address '10.0.0.1' is not host:port");
          assertThat(p.get(2)).startsWith("line 5: expected[1].name: 'a' is listed twice");
          assertThat(p.get(3)).startsWith("line 8: expected[2].address").contains("outside 1..65535");
          assertThat(p.get(4)).startsWith("line 10: fencing.mode:");
          assertThat(p.get(5)).startsWith("line 11: fencing.timings.quorumWindow:");
          assertThat(p.get(6)).startsWith("line 13: gossip.keys[0]:");
        }));
  }

  @Test
  void policyViolationsUseTheFilesFieldNames() {
    String fenceWithNotify = THREE.replace("mode: Watchdog", "mode: Notify").replace("Exclude", "Fence");
    assertThatThrownBy(() -> StandaloneConfigLoader.parse("f.yaml", fenceWithNotify))
        .hasMessageContaining("fencing.quorumLossAction: Fence needs mode Watchdog");
  }

  @Test
  void gossipKeysAreDecoded() throws Exception {
    StandaloneConfig config = StandaloneConfigLoader.parse("k.yaml",
        THREE + "gossip:\n  keys: [AAECAwQFBgcICQoLDA0ODw==]\n");
    assertThat(config.gossipKeys()).singleElement().satisfies(k -> assertThat(k).hasSize(16));
  }
  @Test
  void theDiskTieBreakerWithoutADeviceIsRejectedWithItsLine() {
    String yaml = THREE.replace("tieBreakers: [LowestName]", "tieBreakers: [LowestName, Disk]");
    assertThatThrownBy(() -> StandaloneConfigLoader.parse("test.yaml", yaml))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("fencing.quorum.tieBreakers[1]")
        .hasMessageContaining("the Disk tie-breaker needs disk.device");
  }

  @Test
  void theDiskBlockIsRead() throws Exception {
    String yaml = THREE.replace("tieBreakers: [LowestName]", "tieBreakers: [Disk]")
        + "  disk: {device: /dev/loop7, required: true, ioTimeout: 2s}\n";
    assertThat(StandaloneConfigLoader.parse("test.yaml", yaml).policy().disk()).contains(
        new dev.fencing.policy.ResolvedDisk("/dev/loop7", true, java.time.Duration.ofSeconds(2)));
  }

  @Test
  void theApiServerProbeIsOptionalAndDefaultsToTheServiceAccountCa() throws Exception {
    assertThat(StandaloneConfigLoader.parse("test.yaml", THREE).apiServerProbe()).isEmpty();
    StandaloneConfig withProbe = StandaloneConfigLoader.parse("test.yaml", THREE
        + "apiServerProbe: {url: \"https://10.96.0.1:443/\"}\n");
    assertThat(withProbe.apiServerProbe()).get().satisfies(p -> {
      assertThat(p.readyz()).hasToString("https://10.96.0.1:443/readyz");
      assertThat(p.caFile()).isEqualTo(dev.fencing.agent.apiserver.ApiServerEndpoint.SERVICE_ACCOUNT_CA);
    });
    StandaloneConfig withCa = StandaloneConfigLoader.parse("test.yaml", THREE
        + "apiServerProbe:\n  url: https://api.example:6443\n  caFile: /etc/k8s/ca.crt\n");
    assertThat(withCa.apiServerProbe()).get().extracting(p -> p.caFile().toString()).isEqualTo("/etc/k8s/ca.crt");
  }

  @Test
  void anApiServerProbeThatIsNotHttpsIsRejected() {
    assertThatThrownBy(() -> StandaloneConfigLoader.parse("test.yaml", THREE
        + "apiServerProbe: {url: \"http://10.96.0.1\"}\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("apiServerProbe.url")
        .hasMessageContaining("must be https");
  }
}
