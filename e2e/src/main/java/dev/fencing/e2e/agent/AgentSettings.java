package dev.fencing.e2e.agent;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The fencing policy every agent of a lab group runs with (the {@code fencing:} block of the standalone file).
 *
 * @param watchdogTimeout  the emulated device's timeout, also written as {@code watchdog.timeout}
 * @param quorumLossAction Fence, Exclude or Wait
 * @param tieBreakers      e.g. [LowestName]
 * @param timings          overrides of the profile, by their spec.fencing names (quorumWindow, heartbeatInterval…)
 * @param profile          Auto, Critical, Medium, Moderate or Slow
 * @param diskDevice       the shared disk ({@code disk.device}, ioTimeout 2s), "" for none
 */
public record AgentSettings(Duration watchdogTimeout, String quorumLossAction, List<String> tieBreakers,
                            Map<String, String> timings, String profile, String diskDevice) {

    public AgentSettings {
        tieBreakers = List.copyOf(tieBreakers);
        timings = Map.copyOf(new LinkedHashMap<>(timings));
        java.util.Objects.requireNonNull(diskDevice, "diskDevice");
    }

    /** Settings without a shared disk. */
    public AgentSettings(Duration watchdogTimeout, String quorumLossAction, List<String> tieBreakers,
                         Map<String, String> timings, String profile) {
        this(watchdogTimeout, quorumLossAction, tieBreakers, timings, profile, "");
    }

    /** @return these settings with other tie-breakers and the shared disk {@code device} */
    public AgentSettings withDisk(List<String> newTieBreakers, String device) {
        return new AgentSettings(watchdogTimeout, quorumLossAction, newTieBreakers, timings, profile, device);
    }

    /** Settings under {@code profile: Auto}. */
    public AgentSettings(Duration watchdogTimeout, String quorumLossAction, List<String> tieBreakers,
                         Map<String, String> timings) {
        this(watchdogTimeout, quorumLossAction, tieBreakers, timings, "Auto");
    }

    /**
     * The fastest safe profile: {@code Critical} with a 2 s watchdog (the shortest the policy accepts, for Critical
     * only) and no timing overrides.
     */
    public static AgentSettings critical() {
        return new AgentSettings(Duration.ofSeconds(2), "Fence", List.of("LowestName"), Map.of(),
                "Critical");
    }

    /** Fast settings for tests on one machine: a 6 s watchdog and second-scale quorum timings. */
    public static AgentSettings fastFence() {
        return new AgentSettings(Duration.ofSeconds(6), "Fence", List.of("LowestName"), Map.of(
                "probeInterval", "500ms",
                "probeTimeout", "200ms",
                "gossipInterval", "200ms",
                "heartbeatInterval", "250ms",
                "quorumWindow", "1500ms",
                "feedInterval", "1s",
                "armingDelay", "2s"));
    }

    /**
     * Auto-scaled settings: profile Auto with no memberlist or quorum timing overrides, so every derived timing
     * follows the group size, and a 10 s watchdog.
     */
    public static AgentSettings autoScaled() {
        return new AgentSettings(Duration.ofSeconds(10), "Fence", List.of("LowestName"), Map.of());
    }

    /** @return these settings with one timing override replaced or added */
    public AgentSettings withTiming(String name, String value) {
        Map<String, String> all = new LinkedHashMap<>(timings);
        all.put(name, value);
        return new AgentSettings(watchdogTimeout, quorumLossAction, tieBreakers, all, profile, diskDevice);
    }

    /** @return these settings with another quorum-loss action (Fence, Exclude, Wait) */
    public AgentSettings withQuorumLossAction(String action) {
        return new AgentSettings(watchdogTimeout, action, tieBreakers, timings, profile, diskDevice);
    }

    /**
     * @return the standalone agent file for {@code group} with {@code members} (name, gossip address, ip) and a fresh
     *     random gossip key (an agent without a keyring would not arm)
     */
    public String standaloneYaml(String group, List<Member> members) {
        return standaloneYaml(group, members, List.of(), "Any");
    }

    /**
     * As {@link #standaloneYaml(String, List)}, gossiping on {@code networks} (CIDRs; empty = the gossip address
     * only) with the given reachability rule; each member's {@link Member#gossipAddresses()} name where it is on
     * the networks its gossip address is not inside.
     */
    public String standaloneYaml(String group, List<Member> members, List<String> networks, String reachability) {
        byte[] key = new byte[32];
        new java.security.SecureRandom().nextBytes(key);
        StringBuilder yaml = new StringBuilder();
        yaml.append("group: ").append(group).append('\n');
        yaml.append("gossip:\n  keys: [\"").append(java.util.Base64.getEncoder().encodeToString(key)).append("\"]\n");
        yaml.append("expected:\n");
        for (Member m : members) {
            yaml.append("  - name: ").append(m.name()).append('\n');
            yaml.append("    address: \"").append(m.ip()).append(':').append(m.gossipPort()).append("\"\n");
            yaml.append("    addresses: {InternalIP: \"").append(m.ip()).append("\"}\n");
            if (!m.gossipAddresses().isEmpty()) {
                yaml.append("    gossipAddresses:\n");
                m.gossipAddresses().forEach((cidr, hostPort) -> yaml.append("      \"").append(cidr).append("\": \"")
                        .append(hostPort).append("\"\n"));
            }
        }
        yaml.append("fencing:\n");
        yaml.append("  mode: Watchdog\n");
        yaml.append("  watchdog: {timeout: ").append(watchdogTimeout.toSeconds()).append("s}\n");
        yaml.append("  quorumLossAction: ").append(quorumLossAction).append('\n');
        yaml.append("  profile: ").append(profile).append('\n');
        yaml.append("  quorum: {size: Auto, tieBreakers: [").append(String.join(", ", tieBreakers)).append("]}\n");
        if (!networks.isEmpty()) {
            yaml.append("  networks: [").append(networks.stream().map(n -> "\"" + n + "\"")
                    .collect(java.util.stream.Collectors.joining(", "))).append("]\n");
            yaml.append("  reachability: ").append(reachability).append('\n');
        }
        if (!diskDevice.isEmpty()) {
            yaml.append("  disk: {device: ").append(diskDevice).append(", ioTimeout: 2s}\n");
        }
        if (!timings.isEmpty()) {
            yaml.append("  timings:\n");
            timings.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e ->
                    yaml.append("    ").append(e.getKey()).append(": ").append(e.getValue()).append('\n'));
        }
        return yaml.toString();
    }

    /**
     * One expected member of the group.
     *
     * @param gossipAddresses per gossip network (CIDR) its {@code host:port} there, for networks {@code ip} is not in
     */
    public record Member(String name, String ip, int gossipPort, Map<String, String> gossipAddresses) {

        public Member {
            gossipAddresses = Map.copyOf(gossipAddresses);
        }

        /** A member on its gossip address alone. */
        public Member(String name, String ip, int gossipPort) {
            this(name, ip, gossipPort, Map.of());
        }
    }
}
