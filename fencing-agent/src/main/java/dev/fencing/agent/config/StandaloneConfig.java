package dev.fencing.agent.config;

import dev.fencing.agent.apiserver.ApiServerEndpoint;
import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.ResolvedPolicy;
import dev.fencing.policy.Violation;
import java.util.List;
import java.util.Optional;

/**
 * A standalone agent's configuration (no controller): the group, its fixed expected members and its fencing policy,
 * resolved by the same {@code PolicyResolver} the controller uses.
 *
 * @param group the group (gossip cluster) name
 * @param members the expected members, sorted by name, each with its gossip address
 * @param spec the fencing policy as written
 * @param policy the resolved policy
 * @param gossipKeys AES keys for gossip encryption (first = primary); empty = unencrypted
 * @param warnings accepted but risky choices (e.g. APIReachable)
 * @param apiServerProbe where the APIReachable tie-breaker probes {@code /readyz}; empty: it never answers
 */
public record StandaloneConfig(
    String group,
    List<ExpectedMember> members,
    FencingSpec spec,
    ResolvedPolicy policy,
    List<byte[]> gossipKeys,
    List<Violation> warnings,
    Optional<ApiServerEndpoint> apiServerProbe) {

  public StandaloneConfig {
    members = List.copyOf(members);
    gossipKeys = List.copyOf(gossipKeys);
    warnings = List.copyOf(warnings);
  }

  /** The member called {@code name}, if expected. */
  public Optional<ExpectedMember> member(String name) {
    return members.stream().filter(m -> m.name().equals(name)).findFirst();
  }
}
