package dev.fencing.agent.config;

import dev.fencing.policy.ResolvedPolicy;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything the running agent needs, whichever way it came (standalone file, controller, or the controller config
 * cached in the state dir).
 *
 * @param group the group (gossip cluster)
 * @param self this node's member name
 * @param members the expected members, this node included, sorted by name
 * @param policy the resolved fencing policy
 * @param gossipKeys gossip AES keys, first = primary; empty = unencrypted
 * @param maintenance the maintenance signal's source, when in maintenance (disarm)
 * @param beingRemoved why this node is being removed, when it is (disarm)
 * @param source "file", "controller" or "cache"
 * @param epoch the controller's configuration history identity ("" for a file)
 * @param revision the configuration revision (0 for a file)
 * @param keyringRevision the revision of {@code gossipKeys} (GossipKeyring.revision; 0 for a file)
 */
public record AgentConfig(
    String group,
    String self,
    List<ExpectedMember> members,
    ResolvedPolicy policy,
    List<byte[]> gossipKeys,
    Optional<String> maintenance,
    Optional<String> beingRemoved,
    String source,
    String epoch,
    long revision,
    long keyringRevision) {

  /** Source of a standalone file's config. */
  public static final String SOURCE_FILE = "file";

  public AgentConfig {
    Objects.requireNonNull(group, "group");
    Objects.requireNonNull(self, "self");
    Objects.requireNonNull(policy, "policy");
    members = List.copyOf(members);
    gossipKeys = List.copyOf(gossipKeys);
    Objects.requireNonNull(maintenance, "maintenance");
    Objects.requireNonNull(beingRemoved, "beingRemoved");
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(epoch, "epoch");
  }

  /** A config whose keyring carries no revision (a standalone file, a test). */
  public AgentConfig(String group, String self, List<ExpectedMember> members, ResolvedPolicy policy,
      List<byte[]> gossipKeys, Optional<String> maintenance, Optional<String> beingRemoved, String source, String epoch,
      long revision) {
    this(group, self, members, policy, gossipKeys, maintenance, beingRemoved, source, epoch, revision, 0);
  }

  /**
   * The config of a standalone agent called {@code node}.
   *
   * @throws ConfigException when {@code node} is not one of the file's expected members
   */
  public static AgentConfig fromStandalone(StandaloneConfig config, String node, String sourceName)
      throws ConfigException {
    if (config.member(node).isEmpty()) {
      throw new ConfigException(sourceName, List.of("expected: no member is named '" + node + "' (members: "
          + config.members().stream().map(ExpectedMember::name).toList() + "); pass --node with one of them"));
    }
    return new AgentConfig(config.group(), node, config.members(), config.policy(), config.gossipKeys(),
        Optional.empty(), Optional.empty(), SOURCE_FILE, "", 0);
  }

  /** A copy marked as being removed (disarm) for {@code reason}. */
  public AgentConfig withBeingRemoved(String reason) {
    return new AgentConfig(group, self, members, policy, gossipKeys, maintenance, Optional.of(reason), source,
        epoch, revision, keyringRevision);
  }

  /** This node's own entry. */
  public ExpectedMember selfMember() {
    return member(self).orElseThrow(() -> new IllegalStateException(self + " is not an expected member"));
  }

  /** The member called {@code name}, if expected. */
  public Optional<ExpectedMember> member(String name) {
    return members.stream().filter(m -> m.name().equals(name)).findFirst();
  }
}
