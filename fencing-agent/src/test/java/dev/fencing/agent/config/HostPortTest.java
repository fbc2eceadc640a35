package dev.fencing.agent.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class HostPortTest {

  @Test
  void parsesHostsIpv4AndBracketedIpv6() {
    assertThat(HostPort.parse("node-a.example:7946", true)).isEqualTo(new HostPort("node-a.example", 7946));
    assertThat(HostPort.parse("[fd00::5]:7946", true)).isEqualTo(new HostPort("fd00::5", 7946));
    assertThat(HostPort.parse("10.0.0.5", false)).isEqualTo(new HostPort("10.0.0.5", 0));
    assertThat(HostPort.parse("[::1]", false)).isEqualTo(new HostPort("::1", 0));
  }

  @Test
  void rejectsWhatCannotBeAnAddressSayingHowToWriteIt() {
    assertThatThrownBy(() -> HostPort.parse("10.0.0.5", true)).hasMessageContaining("is not host:port");
    assertThatThrownBy(() -> HostPort.parse("fd00::5:7946", true)).hasMessageContaining("IPv6 as [addr]:port");
    assertThatThrownBy(() -> HostPort.parse("a:http", true)).hasMessageContaining("not a number");
    assertThatThrownBy(() -> HostPort.parse("a:0", true)).hasMessageContaining("outside 1..65535");
    assertThatThrownBy(() -> HostPort.parse(":7946", true)).hasMessageContaining("no host");
    assertThatThrownBy(() -> HostPort.parse("[::1]x", false)).hasMessageContaining("[ipv6]:port");
    assertThatThrownBy(() -> HostPort.parse(" ", true)).hasMessageContaining("missing");
  }
}
