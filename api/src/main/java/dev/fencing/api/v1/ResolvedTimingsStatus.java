package dev.fencing.api.v1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.fencing.policy.DurationFormat;
import dev.fencing.policy.ResolvedTimings;
import java.util.Objects;

/**
 * {@code status.timings}: every timing the group's agents run with, as Kubernetes durations, including the derived
 * T_stop and safe-to-assume-fenced delay.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class ResolvedTimingsStatus {

    @JsonPropertyDescription("Where the values came from, e.g. Auto(n=5) or Medium+overrides.")
    private String profile;

    @JsonPropertyDescription("memberlist probe period.")
    private String probeInterval;

    @JsonPropertyDescription("memberlist probe timeout.")
    private String probeTimeout;

    @JsonPropertyDescription("memberlist suspicion multiplier.")
    private Integer suspicionMult;

    @JsonPropertyDescription("memberlist maximum suspicion multiplier.")
    private Integer suspicionMaxTimeoutMult;

    @JsonPropertyDescription("memberlist gossip period.")
    private String gossipInterval;

    @JsonPropertyDescription("memberlist gossip fan-out.")
    private Integer gossipNodes;

    @JsonPropertyDescription("memberlist retransmission multiplier.")
    private Integer retransmitMult;

    @JsonPropertyDescription("memberlist full state sync period.")
    private String pushPullInterval;

    @JsonPropertyDescription("Quorum heartbeat period.")
    private String heartbeatInterval;

    @JsonPropertyDescription("Quorum round-trip window.")
    private String quorumWindow;

    @JsonPropertyDescription("Maximum stretch factor of the quorum window.")
    private Double localHealthCap;

    @JsonPropertyDescription("Quorum evaluation period.")
    private String evaluationTick;

    @JsonPropertyDescription("Watchdog feed period.")
    private String feedInterval;

    @JsonPropertyDescription("Watchdog device timeout.")
    private String watchdogTimeout;

    @JsonPropertyDescription("Quorum held this long before arming.")
    private String armingDelay;

    @JsonPropertyDescription("Margin added to the safe-to-assume-fenced delay.")
    private String fenceMargin;

    @JsonPropertyDescription("Hard bound: a node cut off from the majority stops feeding at most this long "
            + "after its last heartbeat a majority member received (quorumWindow x "
            + "localHealthCap + evaluationTick).")
    @JsonProperty("tStop")
    private String tStop;

    @JsonPropertyDescription("lastContact + this = the earliest time a lost node may be treated as powered off "
            + "(tStop + watchdogTimeout + fenceMargin).")
    private String safeToAssumeFencedDelay;

    /** An empty instance; Jackson fills it. */
    public ResolvedTimingsStatus() {
    }

    /** Where the values came from, e.g. */
    public String getProfile() {
        return profile;
    }

    /** Sets {@code profile}. */
    public void setProfile(String profile) {
        this.profile = profile;
    }

    /** Sets {@code profile} and returns this. */
    public ResolvedTimingsStatus withProfile(String profile) {
        this.profile = profile;
        return this;
    }

    /** Memberlist probe period. */
    public String getProbeInterval() {
        return probeInterval;
    }

    /** Sets {@code probeInterval}. */
    public void setProbeInterval(String probeInterval) {
        this.probeInterval = probeInterval;
    }

    /** Sets {@code probeInterval} and returns this. */
    public ResolvedTimingsStatus withProbeInterval(String probeInterval) {
        this.probeInterval = probeInterval;
        return this;
    }

    /** Memberlist probe timeout. */
    public String getProbeTimeout() {
        return probeTimeout;
    }

    /** Sets {@code probeTimeout}. */
    public void setProbeTimeout(String probeTimeout) {
        this.probeTimeout = probeTimeout;
    }

    /** Sets {@code probeTimeout} and returns this. */
    public ResolvedTimingsStatus withProbeTimeout(String probeTimeout) {
        this.probeTimeout = probeTimeout;
        return this;
    }

    /** Memberlist suspicion multiplier. */
    public Integer getSuspicionMult() {
        return suspicionMult;
    }

    /** Sets {@code suspicionMult}. */
    public void setSuspicionMult(Integer suspicionMult) {
        this.suspicionMult = suspicionMult;
    }

    /** Sets {@code suspicionMult} and returns this. */
    public ResolvedTimingsStatus withSuspicionMult(Integer suspicionMult) {
        this.suspicionMult = suspicionMult;
        return this;
    }

    /** Memberlist maximum suspicion multiplier. */
    public Integer getSuspicionMaxTimeoutMult() {
        return suspicionMaxTimeoutMult;
    }

    /** Sets {@code suspicionMaxTimeoutMult}. */
    public void setSuspicionMaxTimeoutMult(Integer suspicionMaxTimeoutMult) {
        this.suspicionMaxTimeoutMult = suspicionMaxTimeoutMult;
    }

    /** Sets {@code suspicionMaxTimeoutMult} and returns this. */
    public ResolvedTimingsStatus withSuspicionMaxTimeoutMult(Integer suspicionMaxTimeoutMult) {
        this.suspicionMaxTimeoutMult = suspicionMaxTimeoutMult;
        return this;
    }

    /** Memberlist gossip period. */
    public String getGossipInterval() {
        return gossipInterval;
    }

    /** Sets {@code gossipInterval}. */
    public void setGossipInterval(String gossipInterval) {
        this.gossipInterval = gossipInterval;
    }

    /** Sets {@code gossipInterval} and returns this. */
    public ResolvedTimingsStatus withGossipInterval(String gossipInterval) {
        this.gossipInterval = gossipInterval;
        return this;
    }

    /** Memberlist gossip fan-out. */
    public Integer getGossipNodes() {
        return gossipNodes;
    }

    /** Sets {@code gossipNodes}. */
    public void setGossipNodes(Integer gossipNodes) {
        this.gossipNodes = gossipNodes;
    }

    /** Sets {@code gossipNodes} and returns this. */
    public ResolvedTimingsStatus withGossipNodes(Integer gossipNodes) {
        this.gossipNodes = gossipNodes;
        return this;
    }

    /** Memberlist retransmission multiplier. */
    public Integer getRetransmitMult() {
        return retransmitMult;
    }

    /** Sets {@code retransmitMult}. */
    public void setRetransmitMult(Integer retransmitMult) {
        this.retransmitMult = retransmitMult;
    }

    /** Sets {@code retransmitMult} and returns this. */
    public ResolvedTimingsStatus withRetransmitMult(Integer retransmitMult) {
        this.retransmitMult = retransmitMult;
        return this;
    }

    /** Memberlist full state sync period. */
    public String getPushPullInterval() {
        return pushPullInterval;
    }

    /** Sets {@code pushPullInterval}. */
    public void setPushPullInterval(String pushPullInterval) {
        this.pushPullInterval = pushPullInterval;
    }

    /** Sets {@code pushPullInterval} and returns this. */
    public ResolvedTimingsStatus withPushPullInterval(String pushPullInterval) {
        this.pushPullInterval = pushPullInterval;
        return this;
    }

    /** Quorum heartbeat period. */
    public String getHeartbeatInterval() {
        return heartbeatInterval;
    }

    /** Sets {@code heartbeatInterval}. */
    public void setHeartbeatInterval(String heartbeatInterval) {
        this.heartbeatInterval = heartbeatInterval;
    }

    /** Sets {@code heartbeatInterval} and returns this. */
    public ResolvedTimingsStatus withHeartbeatInterval(String heartbeatInterval) {
        this.heartbeatInterval = heartbeatInterval;
        return this;
    }

    /** Quorum round-trip window. */
    public String getQuorumWindow() {
        return quorumWindow;
    }

    /** Sets {@code quorumWindow}. */
    public void setQuorumWindow(String quorumWindow) {
        this.quorumWindow = quorumWindow;
    }

    /** Sets {@code quorumWindow} and returns this. */
    public ResolvedTimingsStatus withQuorumWindow(String quorumWindow) {
        this.quorumWindow = quorumWindow;
        return this;
    }

    /** Maximum stretch factor of the quorum window. */
    public Double getLocalHealthCap() {
        return localHealthCap;
    }

    /** Sets {@code localHealthCap}. */
    public void setLocalHealthCap(Double localHealthCap) {
        this.localHealthCap = localHealthCap;
    }

    /** Sets {@code localHealthCap} and returns this. */
    public ResolvedTimingsStatus withLocalHealthCap(Double localHealthCap) {
        this.localHealthCap = localHealthCap;
        return this;
    }

    /** Quorum evaluation period. */
    public String getEvaluationTick() {
        return evaluationTick;
    }

    /** Sets {@code evaluationTick}. */
    public void setEvaluationTick(String evaluationTick) {
        this.evaluationTick = evaluationTick;
    }

    /** Sets {@code evaluationTick} and returns this. */
    public ResolvedTimingsStatus withEvaluationTick(String evaluationTick) {
        this.evaluationTick = evaluationTick;
        return this;
    }

    /** Watchdog feed period. */
    public String getFeedInterval() {
        return feedInterval;
    }

    /** Sets {@code feedInterval}. */
    public void setFeedInterval(String feedInterval) {
        this.feedInterval = feedInterval;
    }

    /** Sets {@code feedInterval} and returns this. */
    public ResolvedTimingsStatus withFeedInterval(String feedInterval) {
        this.feedInterval = feedInterval;
        return this;
    }

    /** Watchdog device timeout. */
    public String getWatchdogTimeout() {
        return watchdogTimeout;
    }

    /** Sets {@code watchdogTimeout}. */
    public void setWatchdogTimeout(String watchdogTimeout) {
        this.watchdogTimeout = watchdogTimeout;
    }

    /** Sets {@code watchdogTimeout} and returns this. */
    public ResolvedTimingsStatus withWatchdogTimeout(String watchdogTimeout) {
        this.watchdogTimeout = watchdogTimeout;
        return this;
    }

    /** Quorum held this long before arming. */
    public String getArmingDelay() {
        return armingDelay;
    }

    /** Sets {@code armingDelay}. */
    public void setArmingDelay(String armingDelay) {
        this.armingDelay = armingDelay;
    }

    /** Sets {@code armingDelay} and returns this. */
    public ResolvedTimingsStatus withArmingDelay(String armingDelay) {
        this.armingDelay = armingDelay;
        return this;
    }

    /** Margin added to the safe-to-assume-fenced delay. */
    public String getFenceMargin() {
        return fenceMargin;
    }

    /** Sets {@code fenceMargin}. */
    public void setFenceMargin(String fenceMargin) {
        this.fenceMargin = fenceMargin;
    }

    /** Sets {@code fenceMargin} and returns this. */
    public ResolvedTimingsStatus withFenceMargin(String fenceMargin) {
        this.fenceMargin = fenceMargin;
        return this;
    }

    /** Hard bound. */
    @JsonProperty("tStop")
    public String getTStop() {
        return tStop;
    }

    /** Sets {@code tStop}. */
    public void setTStop(String tStop) {
        this.tStop = tStop;
    }

    /** Sets {@code tStop} and returns this. */
    public ResolvedTimingsStatus withTStop(String tStop) {
        this.tStop = tStop;
        return this;
    }

    /**
     * LastContact + this = the earliest time a lost node may be treated as powered off (tStop + watchdogTimeout +
     * fenceMargin).
     */
    public String getSafeToAssumeFencedDelay() {
        return safeToAssumeFencedDelay;
    }

    /** Sets {@code safeToAssumeFencedDelay}. */
    public void setSafeToAssumeFencedDelay(String safeToAssumeFencedDelay) {
        this.safeToAssumeFencedDelay = safeToAssumeFencedDelay;
    }

    /** Sets {@code safeToAssumeFencedDelay} and returns this. */
    public ResolvedTimingsStatus withSafeToAssumeFencedDelay(String safeToAssumeFencedDelay) {
        this.safeToAssumeFencedDelay = safeToAssumeFencedDelay;
        return this;
    }

    /** The status form of resolved timings: every duration formatted with {@link DurationFormat#format}. */
    public static ResolvedTimingsStatus from(ResolvedTimings t) {
        return new ResolvedTimingsStatus()
                .withProfile(t.profile())
                .withProbeInterval(DurationFormat.format(t.probeInterval()))
                .withProbeTimeout(DurationFormat.format(t.probeTimeout()))
                .withSuspicionMult(t.suspicionMult())
                .withSuspicionMaxTimeoutMult(t.suspicionMaxTimeoutMult())
                .withGossipInterval(DurationFormat.format(t.gossipInterval()))
                .withGossipNodes(t.gossipNodes())
                .withRetransmitMult(t.retransmitMult())
                .withPushPullInterval(DurationFormat.format(t.pushPullInterval()))
                .withHeartbeatInterval(DurationFormat.format(t.heartbeatInterval()))
                .withQuorumWindow(DurationFormat.format(t.quorumWindow()))
                .withLocalHealthCap(t.localHealthCap())
                .withEvaluationTick(DurationFormat.format(t.evaluationTick()))
                .withFeedInterval(DurationFormat.format(t.feedInterval()))
                .withWatchdogTimeout(DurationFormat.format(t.watchdogTimeout()))
                .withArmingDelay(DurationFormat.format(t.armingDelay()))
                .withFenceMargin(DurationFormat.format(t.fenceMargin()))
                .withTStop(DurationFormat.format(t.tStop()))
                .withSafeToAssumeFencedDelay(DurationFormat.format(t.safeToAssumeFencedDelay()));
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof ResolvedTimingsStatus other)) {
            return false;
        }
        return Objects.equals(profile, other.profile)
                && Objects.equals(probeInterval, other.probeInterval)
                && Objects.equals(probeTimeout, other.probeTimeout)
                && Objects.equals(suspicionMult, other.suspicionMult)
                && Objects.equals(suspicionMaxTimeoutMult, other.suspicionMaxTimeoutMult)
                && Objects.equals(gossipInterval, other.gossipInterval)
                && Objects.equals(gossipNodes, other.gossipNodes)
                && Objects.equals(retransmitMult, other.retransmitMult)
                && Objects.equals(pushPullInterval, other.pushPullInterval)
                && Objects.equals(heartbeatInterval, other.heartbeatInterval)
                && Objects.equals(quorumWindow, other.quorumWindow)
                && Objects.equals(localHealthCap, other.localHealthCap)
                && Objects.equals(evaluationTick, other.evaluationTick)
                && Objects.equals(feedInterval, other.feedInterval)
                && Objects.equals(watchdogTimeout, other.watchdogTimeout)
                && Objects.equals(armingDelay, other.armingDelay)
                && Objects.equals(fenceMargin, other.fenceMargin)
                && Objects.equals(tStop, other.tStop)
                && Objects.equals(safeToAssumeFencedDelay, other.safeToAssumeFencedDelay);
    }

    @Override
    public int hashCode() {
        return Objects.hash(profile, probeInterval, probeTimeout, suspicionMult, suspicionMaxTimeoutMult,
                gossipInterval, gossipNodes, retransmitMult, pushPullInterval, heartbeatInterval,
                quorumWindow, localHealthCap, evaluationTick, feedInterval, watchdogTimeout, armingDelay,
                fenceMargin, tStop, safeToAssumeFencedDelay);
    }

    @Override
    public String toString() {
        return "ResolvedTimingsStatus{profile=" + profile
                + ", probeInterval=" + probeInterval
                + ", probeTimeout=" + probeTimeout
                + ", suspicionMult=" + suspicionMult
                + ", suspicionMaxTimeoutMult=" + suspicionMaxTimeoutMult
                + ", gossipInterval=" + gossipInterval
                + ", gossipNodes=" + gossipNodes
                + ", retransmitMult=" + retransmitMult
                + ", pushPullInterval=" + pushPullInterval
                + ", heartbeatInterval=" + heartbeatInterval
                + ", quorumWindow=" + quorumWindow
                + ", localHealthCap=" + localHealthCap
                + ", evaluationTick=" + evaluationTick
                + ", feedInterval=" + feedInterval
                + ", watchdogTimeout=" + watchdogTimeout
                + ", armingDelay=" + armingDelay
                + ", fenceMargin=" + fenceMargin
                + ", tStop=" + tStop
                + ", safeToAssumeFencedDelay=" + safeToAssumeFencedDelay
                + "}";
    }
}
