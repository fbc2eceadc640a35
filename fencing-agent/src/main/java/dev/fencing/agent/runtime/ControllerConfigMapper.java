package dev.fencing.agent.runtime;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ExpectedMember;
import dev.fencing.agent.control.ConfigUpdate;
import dev.fencing.policy.PolicyProtos;
import dev.fencing.policy.ResolvedPolicy;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import dev.fencing.proto.nodemanager.v1.Member;
import dev.fencing.proto.nodemanager.v1.NodeSignals;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/** Maps a controller's {@link GroupConfig} onto the agent's {@link AgentConfig}. */
final class ControllerConfigMapper {

  private ControllerConfigMapper() {}

  /**
   * @throws IllegalArgumentException saying what is wrong (another node's config, a bad member address, a policy
   *     the agent cannot use); the agent keeps its previous config
   */
  static AgentConfig map(ConfigUpdate update, String node) {
    GroupConfig config = update.config();
    if (!config.getNodeName().isEmpty() && !config.getNodeName().equals(node)) {
      throw new IllegalArgumentException("config is for node '" + config.getNodeName() + "', this is '" + node + "'");
    }
    List<ExpectedMember> members = new ArrayList<>();
    for (Member m : config.getMembersList()) {
      try {
        members.add(ExpectedMember.parse(m.getName(), m.getGossipAddress(), m.getAddressesMap())
            .withGossipAddresses(m.getGossipAddressesMap()));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("member " + m.getName() + ": " + e.getMessage(), e);
      }
    }
    members.sort(Comparator.comparing(ExpectedMember::name));
    ResolvedPolicy policy = PolicyProtos.fromProto(config.getPolicy(), members.size());
    List<byte[]> keys = new ArrayList<>();
    if (config.hasKeyring() && !config.getKeyring().getPrimary().isEmpty()) {
      keys.add(config.getKeyring().getPrimary().toByteArray());
      config.getKeyring().getSecondaryList().forEach(k -> keys.add(k.toByteArray()));
    }
    NodeSignals signals = config.getSignals();
    Optional<String> maintenance = signals.hasMaintenance()
        ? Optional.of(signals.getMaintenance().getSource()
            + (signals.getMaintenance().getValue().isEmpty() ? "" : "=" + signals.getMaintenance().getValue()))
        : Optional.empty();
    Optional<String> removed = signals.getBeingRemoved()
        ? Optional.of(signals.getRemovalReason().isEmpty() ? "being removed" : signals.getRemovalReason())
        : Optional.empty();
    return new AgentConfig(config.getGroup(), node, members, policy, keys, maintenance, removed, update.source(),
        update.epoch(), update.revision(), keys.isEmpty() ? 0 : config.getKeyring().getRevision());
  }
}
