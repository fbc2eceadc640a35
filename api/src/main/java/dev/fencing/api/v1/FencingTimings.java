package dev.fencing.api.v1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.fencing.policy.DurationFormat;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import java.util.Objects;

/**
 * {@code spec.fencing.timings}: optional overrides of the profile's timings; an absent field keeps the profile's
 * value.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class FencingTimings {

    @JsonPropertyDescription("memberlist probe period. Kubernetes duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String probeInterval;

    @JsonPropertyDescription("memberlist probe (ack) timeout; must be shorter than probeInterval. Kubernetes "
            + "duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String probeTimeout;

    @JsonPropertyDescription("memberlist suspicion multiplier (Lifeguard alpha).")
    @Min(1)
    @Max(1000)
    private Integer suspicionMult;

    @JsonPropertyDescription("memberlist maximum suspicion multiplier (Lifeguard beta).")
    @Min(1)
    @Max(1000)
    private Integer suspicionMaxTimeoutMult;

    @JsonPropertyDescription("memberlist gossip period. Kubernetes duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String gossipInterval;

    @JsonPropertyDescription("memberlist gossip fan-out.")
    @Min(1)
    @Max(1000)
    private Integer gossipNodes;

    @JsonPropertyDescription("memberlist broadcast retransmission multiplier.")
    @Min(1)
    @Max(1000)
    private Integer retransmitMult;

    @JsonPropertyDescription("memberlist full state sync period. Kubernetes duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String pushPullInterval;

    @JsonPropertyDescription("Quorum heartbeat period; must be shorter than quorumWindow. Kubernetes duration, "
            + "e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String heartbeatInterval;

    @JsonPropertyDescription("A peer counts towards quorum while its latest round trip is younger than this. "
            + "Kubernetes duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String quorumWindow;

    @JsonPropertyDescription("The quorum window may stretch by measured local lag up to window x cap (1.0 to "
            + "4.0).")
    @Min(1.0)
    @Max(4.0)
    private Double localHealthCap;

    @JsonPropertyDescription("How often quorum is evaluated; at most heartbeatInterval. Kubernetes duration, "
            + "e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String evaluationTick;

    @JsonPropertyDescription("Watchdog feed period; shorter than a third of watchdog.timeout. Kubernetes "
            + "duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String feedInterval;

    @JsonPropertyDescription("Quorum must be held continuously this long before the agent arms; at least "
            + "quorumWindow. Kubernetes duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String armingDelay;

    @JsonPropertyDescription("Safety margin added to the safe-to-assume-fenced delay. Kubernetes duration, e.g."
            + " 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String fenceMargin;

    /** An empty instance; Jackson fills it. */
    public FencingTimings() {
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
    public FencingTimings withProbeInterval(String probeInterval) {
        this.probeInterval = probeInterval;
        return this;
    }

    /** Memberlist probe (ack) timeout. */
    public String getProbeTimeout() {
        return probeTimeout;
    }

    /** Sets {@code probeTimeout}. */
    public void setProbeTimeout(String probeTimeout) {
        this.probeTimeout = probeTimeout;
    }

    /** Sets {@code probeTimeout} and returns this. */
    public FencingTimings withProbeTimeout(String probeTimeout) {
        this.probeTimeout = probeTimeout;
        return this;
    }

    /** Memberlist suspicion multiplier (Lifeguard alpha). */
    public Integer getSuspicionMult() {
        return suspicionMult;
    }

    /** Sets {@code suspicionMult}. */
    public void setSuspicionMult(Integer suspicionMult) {
        this.suspicionMult = suspicionMult;
    }

    /** Sets {@code suspicionMult} and returns this. */
    public FencingTimings withSuspicionMult(Integer suspicionMult) {
        this.suspicionMult = suspicionMult;
        return this;
    }

    /** Memberlist maximum suspicion multiplier (Lifeguard beta). */
    public Integer getSuspicionMaxTimeoutMult() {
        return suspicionMaxTimeoutMult;
    }

    /** Sets {@code suspicionMaxTimeoutMult}. */
    public void setSuspicionMaxTimeoutMult(Integer suspicionMaxTimeoutMult) {
        this.suspicionMaxTimeoutMult = suspicionMaxTimeoutMult;
    }

    /** Sets {@code suspicionMaxTimeoutMult} and returns this. */
    public FencingTimings withSuspicionMaxTimeoutMult(Integer suspicionMaxTimeoutMult) {
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
    public FencingTimings withGossipInterval(String gossipInterval) {
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
    public FencingTimings withGossipNodes(Integer gossipNodes) {
        this.gossipNodes = gossipNodes;
        return this;
    }

    /** Memberlist broadcast retransmission multiplier. */
    public Integer getRetransmitMult() {
        return retransmitMult;
    }

    /** Sets {@code retransmitMult}. */
    public void setRetransmitMult(Integer retransmitMult) {
        this.retransmitMult = retransmitMult;
    }

    /** Sets {@code retransmitMult} and returns this. */
    public FencingTimings withRetransmitMult(Integer retransmitMult) {
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
    public FencingTimings withPushPullInterval(String pushPullInterval) {
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
    public FencingTimings withHeartbeatInterval(String heartbeatInterval) {
        this.heartbeatInterval = heartbeatInterval;
        return this;
    }

    /** A peer counts towards quorum while its latest round trip is younger than this. */
    public String getQuorumWindow() {
        return quorumWindow;
    }

    /** Sets {@code quorumWindow}. */
    public void setQuorumWindow(String quorumWindow) {
        this.quorumWindow = quorumWindow;
    }

    /** Sets {@code quorumWindow} and returns this. */
    public FencingTimings withQuorumWindow(String quorumWindow) {
        this.quorumWindow = quorumWindow;
        return this;
    }

    /** The quorum window may stretch by measured local lag up to window x cap (1.0 to 4.0). */
    public Double getLocalHealthCap() {
        return localHealthCap;
    }

    /** Sets {@code localHealthCap}. */
    public void setLocalHealthCap(Double localHealthCap) {
        this.localHealthCap = localHealthCap;
    }

    /** Sets {@code localHealthCap} and returns this. */
    public FencingTimings withLocalHealthCap(Double localHealthCap) {
        this.localHealthCap = localHealthCap;
        return this;
    }

    /** How often quorum is evaluated. */
    public String getEvaluationTick() {
        return evaluationTick;
    }

    /** Sets {@code evaluationTick}. */
    public void setEvaluationTick(String evaluationTick) {
        this.evaluationTick = evaluationTick;
    }

    /** Sets {@code evaluationTick} and returns this. */
    public FencingTimings withEvaluationTick(String evaluationTick) {
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
    public FencingTimings withFeedInterval(String feedInterval) {
        this.feedInterval = feedInterval;
        return this;
    }

    /** Quorum must be held continuously this long before the agent arms. */
    public String getArmingDelay() {
        return armingDelay;
    }

    /** Sets {@code armingDelay}. */
    public void setArmingDelay(String armingDelay) {
        this.armingDelay = armingDelay;
    }

    /** Sets {@code armingDelay} and returns this. */
    public FencingTimings withArmingDelay(String armingDelay) {
        this.armingDelay = armingDelay;
        return this;
    }

    /** Safety margin added to the safe-to-assume-fenced delay. */
    public String getFenceMargin() {
        return fenceMargin;
    }

    /** Sets {@code fenceMargin}. */
    public void setFenceMargin(String fenceMargin) {
        this.fenceMargin = fenceMargin;
    }

    /** Sets {@code fenceMargin} and returns this. */
    public FencingTimings withFenceMargin(String fenceMargin) {
        this.fenceMargin = fenceMargin;
        return this;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof FencingTimings other)) {
            return false;
        }
        return Objects.equals(probeInterval, other.probeInterval)
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
                && Objects.equals(armingDelay, other.armingDelay)
                && Objects.equals(fenceMargin, other.fenceMargin);
    }

    @Override
    public int hashCode() {
        return Objects.hash(probeInterval, probeTimeout, suspicionMult, suspicionMaxTimeoutMult, gossipInterval,
                gossipNodes, retransmitMult, pushPullInterval, heartbeatInterval, quorumWindow,
                localHealthCap, evaluationTick, feedInterval, armingDelay, fenceMargin);
    }

    @Override
    public String toString() {
        return "FencingTimings{probeInterval=" + probeInterval
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
                + ", armingDelay=" + armingDelay
                + ", fenceMargin=" + fenceMargin
                + "}";
    }
}
