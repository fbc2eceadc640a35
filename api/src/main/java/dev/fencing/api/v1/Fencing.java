package dev.fencing.api.v1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import dev.fencing.policy.DurationFormat;
import dev.fencing.policy.PolicyResolver;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.generator.annotation.Size;
import java.util.List;
import java.util.Objects;

/** {@code spec.fencing}: the group's fencing policy; absent = fencing off. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "!has(self.quorumLossAction) || self.quorumLossAction != 'Fence'"
        + " || !has(self.mode) || self.mode == 'Watchdog'",
        message = "quorumLossAction Fence requires mode Watchdog; set mode: Watchdog,"
        + " or quorumLossAction: Exclude or Wait",
        fieldPath = ".quorumLossAction")
// Below 5s only with profile Critical; Auto keeps 5s at every size (the rule cannot see the group size).
// A timeout the pattern refuses is reported by the pattern alone (duration() would fail on it).
@ValidationRule(value = "!has(self.watchdog) || !has(self.watchdog.timeout)"
        + " || !self.watchdog.timeout.matches('" + DurationFormat.WHOLE_UNIT_PATTERN + "')"
        + " || duration(self.watchdog.timeout) >= duration('5s')"
        + " || (has(self.profile) && self.profile == 'Critical')",
        message = PolicyResolver.WATCHDOG_TIMEOUT_NEEDS_CRITICAL_MESSAGE,
        fieldPath = ".watchdog.timeout")
@ValidationRule(value = "!has(self.quorum) || !has(self.quorum.tieBreakers)"
        + " || !self.quorum.tieBreakers.exists(t, t == 'Disk') || (has(self.disk) && has(self.disk.device))",
        message = PolicyResolver.DISK_NEEDS_DEVICE_MESSAGE,
        fieldPath = ".quorum.tieBreakers")
public final class Fencing {

    @JsonPropertyDescription("Watchdog: agents arm the watchdog; Notify: never armed, observe and report only. "
            + "Default Watchdog.")
    @SchemaFrom(type = CrdSchemaEnums.ModeValue.class)
    @Default("Watchdog")
    private String mode;

    @JsonPropertyDescription("Watchdog device settings.")
    private FencingWatchdog watchdog;

    @JsonPropertyDescription("Fence (stop feeding; needs mode Watchdog), Exclude (no reset; the node is "
            + "reported LEFT by every agent that hears it) or Wait (report only). Default Fence "
            + "in mode Watchdog, Wait in mode Notify.")
    @SchemaFrom(type = CrdSchemaEnums.QuorumLossActionValue.class)
    private String quorumLossAction;

    @JsonPropertyDescription("Timing profile: Auto (scaled by group size) or Critical, Medium, Moderate, Slow. "
            + "Only Critical allows a watchdog timeout below 5s (down to 2s). Default Auto.")
    @SchemaFrom(type = CrdSchemaEnums.ProfileValue.class)
    @Default("Auto")
    private String profile;

    @JsonPropertyDescription("Quorum size and tie-breakers.")
    private FencingQuorum quorum;

    @JsonPropertyDescription("Optional overrides of the profile's timings.")
    private FencingTimings timings;

    @JsonPropertyDescription("GroupName: gossip carries the group name as memberlist label; None: no label, for "
            + "groups with gossip peers that do not support labels (Go memberlist before v0.3.0). Default GroupName.")
    @SchemaFrom(type = CrdSchemaEnums.GossipLabelValue.class)
    private String gossipLabel;

    @JsonPropertyDescription("Storm limits: minHealthy, maxConcurrent, cooldown.")
    private FencingStorm storm;

    @JsonPropertyDescription("What the controller does with a node that counts as fenced, within the storm limits: "
            + "Taint (out-of-service taint, removed when the node is back), DeleteNode (the platform recreates the "
            + "machine) or Auto (DeleteNode for nodeType CloudEphemeral, else Taint). Default Auto.")
    @SchemaFrom(type = CrdSchemaEnums.AfterFenceValue.class)
    private String afterFence;

    @JsonPropertyDescription("Gossip networks as CIDRs (at most 4, distinct, not overlapping): the agents run one "
            + "gossip member and one round trip per peer on each, binding the node's address inside it. Empty: the "
            + "node's InternalIP network only.")
    @Size(max = 4)
    private List<String> networks;

    @JsonPropertyDescription("How a peer's round trips on several networks combine: Any (counted when confirmed on "
            + "at least one network) or All (only when confirmed on every network). Default Any.")
    @SchemaFrom(type = CrdSchemaEnums.ReachabilityValue.class)
    private String reachability;

    @JsonPropertyDescription("Shared-disk arbiter (SBD layout): poison pill, cut-off detection and the Disk "
            + "tie-breaker. Absent = none.")
    private FencingDisk disk;

    /** An empty instance; Jackson fills it. */
    public Fencing() {
    }

    /** Watchdog. */
    public String getMode() {
        return mode;
    }

    /** Sets {@code mode}. */
    public void setMode(String mode) {
        this.mode = mode;
    }

    /** Sets {@code mode} and returns this. */
    public Fencing withMode(String mode) {
        this.mode = mode;
        return this;
    }

    /** Watchdog device settings. */
    public FencingWatchdog getWatchdog() {
        return watchdog;
    }

    /** Sets {@code watchdog}. */
    public void setWatchdog(FencingWatchdog watchdog) {
        this.watchdog = watchdog;
    }

    /** Sets {@code watchdog} and returns this. */
    public Fencing withWatchdog(FencingWatchdog watchdog) {
        this.watchdog = watchdog;
        return this;
    }

    /** Fence (stop feeding. */
    public String getQuorumLossAction() {
        return quorumLossAction;
    }

    /** Sets {@code quorumLossAction}. */
    public void setQuorumLossAction(String quorumLossAction) {
        this.quorumLossAction = quorumLossAction;
    }

    /** Sets {@code quorumLossAction} and returns this. */
    public Fencing withQuorumLossAction(String quorumLossAction) {
        this.quorumLossAction = quorumLossAction;
        return this;
    }

    /** Timing profile. */
    public String getProfile() {
        return profile;
    }

    /** Sets {@code profile}. */
    public void setProfile(String profile) {
        this.profile = profile;
    }

    /** Sets {@code profile} and returns this. */
    public Fencing withProfile(String profile) {
        this.profile = profile;
        return this;
    }

    /** Quorum size and tie-breakers. */
    public FencingQuorum getQuorum() {
        return quorum;
    }

    /** Sets {@code quorum}. */
    public void setQuorum(FencingQuorum quorum) {
        this.quorum = quorum;
    }

    /** Sets {@code quorum} and returns this. */
    public Fencing withQuorum(FencingQuorum quorum) {
        this.quorum = quorum;
        return this;
    }

    /** Optional overrides of the profile's timings. */
    public FencingTimings getTimings() {
        return timings;
    }

    /** Sets {@code timings}. */
    public void setTimings(FencingTimings timings) {
        this.timings = timings;
    }

    /** Sets {@code timings} and returns this. */
    public Fencing withTimings(FencingTimings timings) {
        this.timings = timings;
        return this;
    }

    /** GroupName or None. */
    public String getGossipLabel() {
        return gossipLabel;
    }

    /** Sets {@code gossipLabel}. */
    public void setGossipLabel(String gossipLabel) {
        this.gossipLabel = gossipLabel;
    }

    /** Sets {@code gossipLabel} and returns this. */
    public Fencing withGossipLabel(String gossipLabel) {
        this.gossipLabel = gossipLabel;
        return this;
    }

    /** Storm limits. */
    public FencingStorm getStorm() {
        return storm;
    }

    /** Sets {@code storm}. */
    public void setStorm(FencingStorm storm) {
        this.storm = storm;
    }

    /** Sets {@code storm} and returns this. */
    public Fencing withStorm(FencingStorm storm) {
        this.storm = storm;
        return this;
    }

    /** What the controller does with a fenced node. */
    public String getAfterFence() {
        return afterFence;
    }

    /** Sets {@code afterFence}. */
    public void setAfterFence(String afterFence) {
        this.afterFence = afterFence;
    }

    /** Sets {@code afterFence} and returns this. */
    public Fencing withAfterFence(String afterFence) {
        this.afterFence = afterFence;
        return this;
    }

    /** Gossip networks as CIDRs. */
    public List<String> getNetworks() {
        return networks;
    }

    /** Sets {@code networks}. */
    public void setNetworks(List<String> networks) {
        this.networks = networks;
    }

    /** Sets {@code networks} and returns this. */
    public Fencing withNetworks(List<String> networks) {
        this.networks = networks;
        return this;
    }

    /** Any or All. */
    public String getReachability() {
        return reachability;
    }

    /** Sets {@code reachability}. */
    public void setReachability(String reachability) {
        this.reachability = reachability;
    }

    /** Sets {@code reachability} and returns this. */
    public Fencing withReachability(String reachability) {
        this.reachability = reachability;
        return this;
    }

    /** The shared-disk arbiter. */
    public FencingDisk getDisk() {
        return disk;
    }

    /** Sets {@code disk}. */
    public void setDisk(FencingDisk disk) {
        this.disk = disk;
    }

    /** Sets {@code disk} and returns this. */
    public Fencing withDisk(FencingDisk disk) {
        this.disk = disk;
        return this;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Fencing other)) {
            return false;
        }
        return Objects.equals(mode, other.mode)
                && Objects.equals(watchdog, other.watchdog)
                && Objects.equals(quorumLossAction, other.quorumLossAction)
                && Objects.equals(profile, other.profile)
                && Objects.equals(quorum, other.quorum)
                && Objects.equals(timings, other.timings)
                && Objects.equals(gossipLabel, other.gossipLabel)
                && Objects.equals(storm, other.storm)
                && Objects.equals(afterFence, other.afterFence)
                && Objects.equals(networks, other.networks)
                && Objects.equals(reachability, other.reachability)
                && Objects.equals(disk, other.disk);
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, watchdog, quorumLossAction, profile, quorum, timings, gossipLabel, storm,
                afterFence, networks, reachability, disk);
    }

    @Override
    public String toString() {
        return "Fencing{mode=" + mode
                + ", watchdog=" + watchdog
                + ", quorumLossAction=" + quorumLossAction
                + ", profile=" + profile
                + ", quorum=" + quorum
                + ", storm=" + storm
                + ", afterFence=" + afterFence
                + ", timings=" + timings
                + ", gossipLabel=" + gossipLabel
                + ", networks=" + networks
                + ", reachability=" + reachability
                + ", disk=" + disk
                + "}";
    }
}
