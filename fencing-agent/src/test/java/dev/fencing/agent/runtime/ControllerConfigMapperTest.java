package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ExpectedMember;
import dev.fencing.agent.control.ConfigUpdate;
import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.PolicyProtos;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.proto.nodemanager.v1.GossipKeyring;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import dev.fencing.proto.nodemanager.v1.Maintenance;
import dev.fencing.proto.nodemanager.v1.Member;
import dev.fencing.proto.nodemanager.v1.NodeSignals;
import org.junit.jupiter.api.Test;

class ControllerConfigMapperTest {

  static GroupConfig.Builder config() {
    return GroupConfig.newBuilder().setGroup("workers").setNodeName("node-b")
        .setPolicy(PolicyProtos.toProto(PolicyResolver.resolve(FencingSpec.DEFAULTS, 2)))
        .addMembers(Member.newBuilder().setName("node-b").setGossipAddress("10.0.0.2:7946")
            .putAddresses("InternalIP", "10.0.0.2"))
        .addMembers(Member.newBuilder().setName("node-a").setGossipAddress("[fd00::1]:7946"));
  }

  @Test
  void mapsMembersPolicySignalsAndKeyring() {
    GroupConfig full = config()
        .setSignals(NodeSignals.newBuilder().setMaintenance(Maintenance.newBuilder()
            .setSource("update.node.deckhouse.io/approved").setValue("true")).setBeingRemoved(true))
        .setKeyring(GossipKeyring.newBuilder().setPrimary(ByteString.copyFrom(new byte[16]))
            .addSecondary(ByteString.copyFrom(new byte[32])))
        .build();
    AgentConfig mapped = ControllerConfigMapper.map(new ConfigUpdate(full, "e", 7, "controller"), "node-b");
    assertThat(mapped.members()).extracting(ExpectedMember::name).containsExactly("node-a", "node-b");
    assertThat(mapped.member("node-a").orElseThrow().host()).isEqualTo("fd00::1");
    assertThat(mapped.selfMember().addresses()).containsEntry("InternalIP", "10.0.0.2");
    assertThat(mapped.policy().quorumSize()).isEqualTo(2);
    assertThat(mapped.maintenance()).contains("update.node.deckhouse.io/approved=true");
    assertThat(mapped.beingRemoved()).contains("being removed");
    assertThat(mapped.gossipKeys()).hasSize(2);
    assertThat(mapped.source()).isEqualTo("controller");
    assertThat(mapped.epoch()).isEqualTo("e");
    assertThat(mapped.revision()).isEqualTo(7);
  }

  @Test
  void mapsTheSharedDisk() {
    GroupConfig withDisk = config().setPolicy(PolicyProtos.toProto(PolicyResolver.resolve(FencingSpec.DEFAULTS
        .withTieBreakers(java.util.List.of(dev.fencing.policy.TieBreakerKind.DISK))
        .withDisk(new dev.fencing.policy.DiskSpec("/dev/sdb", true, null)), 2))).build();
    AgentConfig mapped = ControllerConfigMapper.map(new ConfigUpdate(withDisk, "e", 3, "controller"), "node-b");
    assertThat(mapped.policy().disk()).contains(new dev.fencing.policy.ResolvedDisk("/dev/sdb", true,
        java.time.Duration.ofSeconds(5)));
    assertThat(ControllerConfigMapper.map(new ConfigUpdate(config().build(), "e", 1, "controller"), "node-b")
        .policy().disk()).isEmpty();
  }

  @Test
  void refusesAnotherNodesConfigAndBadAddresses() {
    assertThatThrownBy(() -> ControllerConfigMapper.map(new ConfigUpdate(config().build(), "e", 1, "controller"),
        "node-z")).hasMessageContaining("config is for node 'node-b'");
    GroupConfig bad = config().addMembers(Member.newBuilder().setName("node-c").setGossipAddress("nowhere")).build();
    assertThatThrownBy(() -> ControllerConfigMapper.map(new ConfigUpdate(bad, "e", 1, "controller"), "node-b"))
        .hasMessageContaining("member node-c").hasMessageContaining("not host:port");
  }
}
