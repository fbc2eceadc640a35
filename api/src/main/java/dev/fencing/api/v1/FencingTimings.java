package dev.fencing.api.v1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.fencing.policy.DurationFormat;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import java.util.Objects;

/** {@code spec.fencing.timings}: optional overrides of the profile's timings; an absent field keeps the profile's value. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class FencingTimings {

    @JsonPropertyDescription("memberlist probe period. Kubernetes duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String probeInterval;

    @JsonPropertyDescription("memberlist probe (ack) timeout; must be shorter than probeInterval. Kubernetes duration, e.g. 500ms, 2s, 1m30s.")
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

    @JsonPropertyDescription("Quorum heartbeat period; must be shorter than quorumWindow. Kubernetes duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String heartbeatInterval;

    @JsonPropertyDescription("A peer counts towards quorum while its latest round trip is younger than this. Kubernetes duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String quorumWindow;

    @JsonPropertyDescription("The quorum window may stretch by measured local lag up to window x cap (1.0 to 4.0).")
    @Min(1.0)
    @Max(4.0)
    private Double localHealthCap;

    @JsonPropertyDescription("How often quorum is evaluated; at most heartbeatInterval. Kubernetes duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String evaluationTick;

    @JsonPropertyDescription("Watchdog feed period; shorter than a third of watchdog.timeout. Kubernetes duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String feedInterval;

    @JsonPropertyDescription("Quorum must be held continuously this long before the agent arms; at least quorumWindow. Kubernetes duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String armingDelay;

    @JsonPropertyDescription("Safety margin added to the safe-to-assume-fenced delay. Kubernetes duration, e.g. 500ms, 2s, 1m30s.")
    @Pattern(DurationFormat.PATTERN)
    private String fenceMargin;

    /** An empty instance; Jackson fills it. */
    public FencingTimings() {
    }

    /** memberlist probe period. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public String getProbeInterval() {
        return probeInterval;
    }

    /** Sets: memberlist probe period. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public void setProbeInterval(String probeInterval) {
        this.probeInterval = probeInterval;
    }

    /** Fluent setter: memberlist probe period. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public FencingTimings withProbeInterval(String probeInterval) {
        this.probeInterval = probeInterval;
        return this;
    }

    /** memberlist probe (ack) timeout; must be shorter than probeInterval. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public String getProbeTimeout() {
        return probeTimeout;
    }

    /** Sets: memberlist probe (ack) timeout; must be shorter than probeInterval. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public void setProbeTimeout(String probeTimeout) {
        this.probeTimeout = probeTimeout;
    }

    /** Fluent setter: memberlist probe (ack) timeout; must be shorter than probeInterval. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public FencingTimings withProbeTimeout(String probeTimeout) {
        this.probeTimeout = probeTimeout;
        return this;
    }

    /** memberlist suspicion multiplier (Lifeguard alpha). */
    public Integer getSuspicionMult() {
        return suspicionMult;
    }

    /** Sets: memberlist suspicion multiplier (Lifeguard alpha). */
    public void setSuspicionMult(Integer suspicionMult) {
        this.suspicionMult = suspicionMult;
    }

    /** Fluent setter: memberlist suspicion multiplier (Lifeguard alpha). */
    public FencingTimings withSuspicionMult(Integer suspicionMult) {
        this.suspicionMult = suspicionMult;
        return this;
    }

    /** memberlist maximum suspicion multiplier (Lifeguard beta). */
    public Integer getSuspicionMaxTimeoutMult() {
        return suspicionMaxTimeoutMult;
    }

    /** Sets: memberlist maximum suspicion multiplier (Lifeguard beta). */
    public void setSuspicionMaxTimeoutMult(Integer suspicionMaxTimeoutMult) {
        this.suspicionMaxTimeoutMult = suspicionMaxTimeoutMult;
    }

    /** Fluent setter: memberlist maximum suspicion multiplier (Lifeguard beta). */
    public FencingTimings withSuspicionMaxTimeoutMult(Integer suspicionMaxTimeoutMult) {
        this.suspicionMaxTimeoutMult = suspicionMaxTimeoutMult;
        return this;
    }

    /** memberlist gossip period. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public String getGossipInterval() {
        return gossipInterval;
    }

    /** Sets: memberlist gossip period. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public void setGossipInterval(String gossipInterval) {
        this.gossipInterval = gossipInterval;
    }

    /** Fluent setter: memberlist gossip period. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public FencingTimings withGossipInterval(String gossipInterval) {
        this.gossipInterval = gossipInterval;
        return this;
    }

    /** memberlist gossip fan-out. */
    public Integer getGossipNodes() {
        return gossipNodes;
    }

    /** Sets: memberlist gossip fan-out. */
    public void setGossipNodes(Integer gossipNodes) {
        this.gossipNodes = gossipNodes;
    }

    /** Fluent setter: memberlist gossip fan-out. */
    public FencingTimings withGossipNodes(Integer gossipNodes) {
        this.gossipNodes = gossipNodes;
        return this;
    }

    /** memberlist broadcast retransmission multiplier. */
    public Integer getRetransmitMult() {
        return retransmitMult;
    }

    /** Sets: memberlist broadcast retransmission multiplier. */
    public void setRetransmitMult(Integer retransmitMult) {
        this.retransmitMult = retransmitMult;
    }

    /** Fluent setter: memberlist broadcast retransmission multiplier. */
    public FencingTimings withRetransmitMult(Integer retransmitMult) {
        this.retransmitMult = retransmitMult;
        return this;
    }

    /** memberlist full state sync period. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public String getPushPullInterval() {
        return pushPullInterval;
    }

    /** Sets: memberlist full state sync period. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public void setPushPullInterval(String pushPullInterval) {
        this.pushPullInterval = pushPullInterval;
    }

    /** Fluent setter: memberlist full state sync period. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public FencingTimings withPushPullInterval(String pushPullInterval) {
        this.pushPullInterval = pushPullInterval;
        return this;
    }

    /** Quorum heartbeat period; must be shorter than quorumWindow. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public String getHeartbeatInterval() {
        return heartbeatInterval;
    }

    /** Sets: quorum heartbeat period; must be shorter than quorumWindow. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public void setHeartbeatInterval(String heartbeatInterval) {
        this.heartbeatInterval = heartbeatInterval;
    }

    /** Fluent setter: quorum heartbeat period; must be shorter than quorumWindow. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public FencingTimings withHeartbeatInterval(String heartbeatInterval) {
        this.heartbeatInterval = heartbeatInterval;
        return this;
    }

    /** A peer counts towards quorum while its latest round trip is younger than this. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public String getQuorumWindow() {
        return quorumWindow;
    }

    /** Sets: a peer counts towards quorum while its latest round trip is younger than this. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public void setQuorumWindow(String quorumWindow) {
        this.quorumWindow = quorumWindow;
    }

    /** Fluent setter: a peer counts towards quorum while its latest round trip is younger than this. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public FencingTimings withQuorumWindow(String quorumWindow) {
        this.quorumWindow = quorumWindow;
        return this;
    }

    /** The quorum window may stretch by measured local lag up to window x cap (1.0 to 4.0). */
    public Double getLocalHealthCap() {
        return localHealthCap;
    }

    /** Sets: the quorum window may stretch by measured local lag up to window x cap (1.0 to 4.0). */
    public void setLocalHealthCap(Double localHealthCap) {
        this.localHealthCap = localHealthCap;
    }

    /** Fluent setter: the quorum window may stretch by measured local lag up to window x cap (1.0 to 4.0). */
    public FencingTimings withLocalHealthCap(Double localHealthCap) {
        this.localHealthCap = localHealthCap;
        return this;
    }

    /** How often quorum is evaluated; at most heartbeatInterval. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public String getEvaluationTick() {
        return evaluationTick;
    }

    /** Sets: how often quorum is evaluated; at most heartbeatInterval. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public void setEvaluationTick(String evaluationTick) {
        this.evaluationTick = evaluationTick;
    }

    /** Fluent setter: how often quorum is evaluated; at most heartbeatInterval. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public FencingTimings withEvaluationTick(String evaluationTick) {
        this.evaluationTick = evaluationTick;
        return this;
    }

    /** Watchdog feed period; shorter than a third of watchdog.timeout. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public String getFeedInterval() {
        return feedInterval;
    }

    /** Sets: watchdog feed period; shorter than a third of watchdog.timeout. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public void setFeedInterval(String feedInterval) {
        this.feedInterval = feedInterval;
    }

    /** Fluent setter: watchdog feed period; shorter than a third of watchdog.timeout. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public FencingTimings withFeedInterval(String feedInterval) {
        this.feedInterval = feedInterval;
        return this;
    }

    /** Quorum must be held continuously this long before the agent arms; at least quorumWindow. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public String getArmingDelay() {
        return armingDelay;
    }

    /** Sets: quorum must be held continuously this long before the agent arms; at least quorumWindow. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public void setArmingDelay(String armingDelay) {
        this.armingDelay = armingDelay;
    }

    /** Fluent setter: quorum must be held continuously this long before the agent arms; at least quorumWindow. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public FencingTimings withArmingDelay(String armingDelay) {
        this.armingDelay = armingDelay;
        return this;
    }

    /** Safety margin added to the safe-to-assume-fenced delay. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public String getFenceMargin() {
        return fenceMargin;
    }

    /** Sets: safety margin added to the safe-to-assume-fenced delay. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
    public void setFenceMargin(String fenceMargin) {
        this.fenceMargin = fenceMargin;
    }

    /** Fluent setter: safety margin added to the safe-to-assume-fenced delay. Kubernetes duration, e.g. 500ms, 2s, 1m30s. */
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
        return Objects.hash(probeInterval, probeTimeout, suspicionMult, suspicionMaxTimeoutMult, gossipInterval, gossipNodes, retransmitMult, pushPullInterval, heartbeatInterval, quorumWindow, localHealthCap, evaluationTick, feedInterval, armingDelay, fenceMargin);
    }

    @Override
    public String toString() {
        return "FencingTimings{probeInterval=" + probeInterval + ", probeTimeout=" + probeTimeout + ", suspicionMult=" + suspicionMult + ", suspicionMaxTimeoutMult=" + suspicionMaxTimeoutMult + ", gossipInterval=" + gossipInterval + ", gossipNodes=" + gossipNodes + ", retransmitMult=" + retransmitMult + ", pushPullInterval=" + pushPullInterval + ", heartbeatInterval=" + heartbeatInterval + ", quorumWindow=" + quorumWindow + ", localHealthCap=" + localHealthCap + ", evaluationTick=" + evaluationTick + ", feedInterval=" + feedInterval + ", armingDelay=" + armingDelay + ", fenceMargin=" + fenceMargin + "}";
    }
}
