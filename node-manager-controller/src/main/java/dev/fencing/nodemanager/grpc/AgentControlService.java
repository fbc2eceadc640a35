package dev.fencing.nodemanager.grpc;

import com.google.protobuf.Duration;
import dev.fencing.nodemanager.grpc.auth.AgentAuthException;
import dev.fencing.nodemanager.grpc.auth.AgentAuthInterceptor;
import dev.fencing.nodemanager.grpc.auth.AgentIdentity;
import dev.fencing.nodemanager.grpc.auth.AgentPodAuthorizer;
import dev.fencing.nodemanager.grpc.auth.ClientText;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.report.AgentReports;
import dev.fencing.nodemanager.stream.ConfigDistributor;
import dev.fencing.nodemanager.tiebreak.TieBreakArbiter;
import dev.fencing.nodemanager.tiebreak.TieBreakDecision;
import dev.fencing.proto.nodemanager.v1.AgentControlGrpc;
import dev.fencing.proto.nodemanager.v1.AgentHello;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.TieBreakGrant;
import dev.fencing.proto.nodemanager.v1.TieBreakRequest;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.InstantSource;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code AgentControl.Connect} on every replica: the agent's hello picks its group from the informer caches, the
 * {@link ConfigDistributor} sends a full config or the missed deltas and then every change; reports are kept in
 * {@link AgentReports}; tie-break requests are decided by the {@link TieBreakArbiter} on the leader. A follower
 * forwards an agent's reports and tie-break requests to the leader through the {@link LeaderLink} and relays the
 * leader's answers.
 */
public final class AgentControlService extends AgentControlGrpc.AgentControlImplBase {

    private static final Logger LOG = LoggerFactory.getLogger(AgentControlService.class);

    /** Stream settings. */
    public record Settings(int queueCapacity, java.time.Duration helloTimeout, java.time.Duration minTieLease,
                           java.time.Duration maxTieLease) {
        /** 4096 queued messages, 10 s to say hello, tie leases between 2 s and 30 s. */
        public static final Settings DEFAULTS = new Settings(4096, java.time.Duration.ofSeconds(10),
                java.time.Duration.ofSeconds(2), java.time.Duration.ofSeconds(30));
    }

    private final ConfigDistributor distributor;
    private final AgentDirectory directory;
    private final AgentReports reports;
    private final TieBreakArbiter arbiter;
    private final InstantSource clock;
    private final ScheduledExecutorService scheduler;
    private final Settings settings;
    private final AgentStream.StreamStats stats = new AgentStream.StreamStats();
    /**
     * Streams one agent pod may hold open on this replica at once: its own, the relay of a follower it is connected
     * to, and old ones whose end this replica has not noticed yet. Bounds what one pod's token (a node's root can
     * read its agent's) can take of {@code --max-agent-streams}.
     */
    static final int MAX_STREAMS_PER_POD = 16;
    private final java.util.concurrent.ConcurrentHashMap<String, Integer> streamsPerPod =
            new java.util.concurrent.ConcurrentHashMap<>();
    private final LeaderLink leaderLink;
    private final StreamLimits limits;
    private final HelloCheck helloCheck;

    /**
     * Who may say hello as which node of which group. The production check is {@link AgentPodAuthorizer} on the
     * identity {@link AgentAuthInterceptor} put in the call context.
     */
    @FunctionalInterface
    public interface HelloCheck {
        /** Accepts every hello: only for tests of the stream logic on an in-process channel without identities. */
        HelloCheck UNCHECKED = (identity, node, group) -> { };

        /**
         * @param identity the caller's identity, or null when the call carried none
         * @throws AgentAuthException to refuse the hello with its status
         */
        void check(AgentIdentity identity, String node, String group) throws AgentAuthException;

        /** The production check: an identity is required and its pod must be the group's agent on the node. */
        static HelloCheck pods(AgentPodAuthorizer authorizer) {
            return (identity, node, group) -> {
                if (identity == null) {
                    throw new AgentAuthException(Status.UNAUTHENTICATED.withDescription("no authenticated identity"));
                }
                authorizer.authorize(identity, node, group);
            };
        }
    }

    /** A service without identity checks and without a leader link (tests of the stream logic). */
    public AgentControlService(ConfigDistributor distributor, AgentDirectory directory, AgentReports reports,
                               TieBreakArbiter arbiter, InstantSource clock, ScheduledExecutorService scheduler,
                               Settings settings) {
        this(distributor, directory, reports, arbiter, clock, scheduler, settings, null, HelloCheck.UNCHECKED);
    }

    /**
     * @param leaderLink forwards tie-break requests and reports to the leader when this replica does not lead;
     *                   null: answer "not leader" and keep reports locally
     * @param helloCheck  decides whether the caller may speak for the node its hello names
     */
    public AgentControlService(ConfigDistributor distributor, AgentDirectory directory, AgentReports reports,
                               TieBreakArbiter arbiter, InstantSource clock, ScheduledExecutorService scheduler,
                               Settings settings, LeaderLink leaderLink, HelloCheck helloCheck) {
        this(distributor, directory, reports, arbiter, clock, scheduler, settings, leaderLink, helloCheck,
                StreamLimits.DEFAULTS);
    }

    /** @param limits how many streams this replica serves and how many bytes one may queue */
    public AgentControlService(ConfigDistributor distributor, AgentDirectory directory, AgentReports reports,
                               TieBreakArbiter arbiter, InstantSource clock, ScheduledExecutorService scheduler,
                               Settings settings, LeaderLink leaderLink, HelloCheck helloCheck, StreamLimits limits) {
        this.limits = limits;
        this.leaderLink = leaderLink;
        this.helloCheck = helloCheck;
        this.distributor = distributor;
        this.directory = directory;
        this.reports = reports;
        this.arbiter = arbiter;
        this.clock = clock;
        this.scheduler = scheduler;
        this.settings = settings;
    }

    /** Messages queued across all streams (not yet handed to the transport). */
    public long queuedMessages() {
        return stats.queued.get();
    }

    /** Serialized bytes handed to the transport across all streams. */
    public long bytesSent() {
        return stats.bytesSent.get();
    }

    /** Messages handed to the transport across all streams. */
    public long messagesSent() {
        return stats.messagesSent.get();
    }

    @Override
    public StreamObserver<AgentMessage> connect(StreamObserver<ControllerMessage> responseObserver) {
        ServerCallStreamObserver<ControllerMessage> out = (ServerCallStreamObserver<ControllerMessage>) responseObserver;
        if (stats.open.incrementAndGet() > limits.maxStreams()) {
            LOG.warn("event=agent_stream_refused reason=stream_limit limit={} action=\"the agent retries\"",
                    limits.maxStreams());
            return refuse(out, "this controller replica already serves " + limits.maxStreams()
                    + " agent streams (--max-agent-streams); retry later");
        }
        AgentIdentity identity = AgentAuthInterceptor.IDENTITY.get();
        String pod = identity == null ? null : identity.podUid();
        if (pod != null && streamsPerPod.merge(pod, 1, Integer::sum) > MAX_STREAMS_PER_POD) {
            podStreamEnded(pod);
            LOG.warn("event=agent_stream_refused reason=pod_stream_limit pod={}/{} node={} limit={}",
                    identity.namespace(), identity.podName(), identity.nodeName(), MAX_STREAMS_PER_POD);
            return refuse(out, "pod " + identity.podName() + " already holds " + MAX_STREAMS_PER_POD
                    + " agent streams on this controller replica");
        }
        AgentStream stream = new AgentStream(out, settings.queueCapacity(), limits.maxQueuedBytes(), stats);
        Connection connection = new Connection(stream, identity);
        out.setOnReadyHandler(stream::drain);
        out.setOnCancelHandler(connection::ended);
        // A close of ours (overflow, fencing switched off) ends the connection too; off the stream's lock, which the
        // sender may hold together with the distributor's.
        stream.onServerClose(() -> scheduler.execute(connection::ended));
        scheduler.schedule(() -> {
            if (connection.node == null) {
                stream.close(Status.DEADLINE_EXCEEDED.withDescription("no AgentHello within "
                        + settings.helloTimeout().toMillis() + "ms"));
                connection.ended();
            }
        }, settings.helloTimeout().toMillis(), TimeUnit.MILLISECONDS);
        return connection;
    }

    private void podStreamEnded(String pod) {
        streamsPerPod.computeIfPresent(pod, (k, n) -> n <= 1 ? null : n - 1);
    }

    /** Agent streams open on this replica. */
    public int openStreams() {
        return stats.open.get();
    }

    /** Streams refused because this replica already served {@link StreamLimits#maxStreams()}. */
    public long refusedStreams() {
        return stats.refused.get();
    }

    /** Streams ended because their queue overflowed (messages or bytes). */
    public long overflowedStreams() {
        return stats.overflows.get();
    }

    // Over a stream limit: ended before anything is read, so the agent retries (through the Service, possibly
    // reaching another replica) without costing this one a queue.
    private StreamObserver<AgentMessage> refuse(ServerCallStreamObserver<ControllerMessage> out, String why) {
        stats.open.decrementAndGet();
        stats.refused.incrementAndGet();
        out.onError(Status.RESOURCE_EXHAUSTED.withDescription(why).asRuntimeException());
        return new StreamObserver<>() {
            @Override
            public void onNext(AgentMessage value) {
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        };
    }

    private final class Connection implements StreamObserver<AgentMessage> {
        private final AgentStream stream;
        private final AgentIdentity identity;
        private volatile String node;
        private volatile String group;
        private volatile ConfigDistributor.Subscription subscription;
        private boolean ended;
        private LeaderLink.Upstream upstream;

        Connection(AgentStream stream, AgentIdentity identity) {
            this.stream = stream;
            this.identity = identity;
        }

        @Override
        public void onNext(AgentMessage message) {
            switch (message.getKindCase()) {
                case HELLO -> hello(message.getHello());
                case REPORT -> {
                    if (subscription == null) {
                        stream.close(Status.FAILED_PRECONDITION.withDescription("send AgentHello first"));
                        return;
                    }
                    reports.record(node, group, message.getReport(), clock.instant());
                    subscription.reportedApplied(message.getReport().getEpoch(),
                            message.getReport().getAppliedRevision());
                    if (!arbiter.leading()) {
                        upstream().ifPresent(up -> up.send(message));
                    }
                }
                case TIE_BREAK_REQUEST -> {
                    if (subscription == null) {
                        stream.close(Status.FAILED_PRECONDITION.withDescription("send AgentHello first"));
                        return;
                    }
                    tieBreak(message.getTieBreakRequest());
                }
                case KIND_NOT_SET -> LOG.debug("event=empty_agent_message node={}", node);
            }
        }

        private void hello(AgentHello hello) {
            if (node != null) {
                LOG.warn("event=duplicate_hello node=\"{}\"", ClientText.escape(node));
                return;
            }
            String name = hello.getNodeName();
            if (name.isBlank()) {
                stream.close(Status.INVALID_ARGUMENT.withDescription("AgentHello.node_name is empty"));
                return;
            }
            stream.identify(name);
            node = name;
            Optional<String> g = directory.groupOf(name).or(() -> distributor.lastGroupOf(name));
            if (g.isEmpty()) {
                LOG.info("event=agent_refused node=\"{}\" reason=no_group", ClientText.escape(name));
                stream.close(Status.FAILED_PRECONDITION.withDescription("node " + name + " is not labelled into a "
                        + "fencing-enabled NodeGroup (label node.deckhouse.io/group) as far as this controller knows"));
                return;
            }
            try {
                helloCheck.check(identity, name, g.get());
            } catch (AgentAuthException e) {
                LOG.warn("event=agent_refused node=\"{}\" group={} status={} pod={} reason=\"{}\"",
                        ClientText.escape(name), g.get(), e.status().getCode(),
                        identity == null ? "" : identity.podName(), ClientText.escape(e.status().getDescription()));
                stream.close(e.status());
                return;
            }
            group = g.get();
            boundByTokenLifetime();
            Optional<ConfigDistributor.Subscription> s =
                    distributor.subscribe(group, stream, hello.getEpoch(), hello.getLastRevision());
            if (s.isEmpty()) {
                String why = directory.model(group)
                        .filter(m -> !m.violations().isEmpty())
                        .map(m -> "NodeGroup " + m.group() + " has an invalid spec.fencing: " + m.violations())
                        .or(() -> directory.notServedReason(group))
                        .orElse("NodeGroup " + group + " has no valid fencing config yet");
                LOG.info("event=agent_refused node={} group={} reason=\"{}\"", name, group, why);
                stream.close(Status.FAILED_PRECONDITION.withDescription(why));
                return;
            }
            subscription = s.get();
            reports.connected(name, group);
            LOG.info("event=agent_connected node={} group={} version=\"{}\" agent_epoch=\"{}\" agent_revision={}",
                    name, group, ClientText.escape(hello.getAgentVersion()), ClientText.escape(hello.getEpoch()),
                    hello.getLastRevision());
            synchronized (this) {
                if (ended) {
                    subscription.cancel();
                    reports.disconnected(name, group);
                }
            }
        }

        // A stream lives no longer than the token that opened it: the agent reconnects with the fresh token the
        // kubelet has rotated in meanwhile, and a deleted pod's stream does not outlive its token. The forwarded
        // stream to the leader presents the same token, so it stays valid too.
        private void boundByTokenLifetime() {
            if (identity == null || identity.expiresAt() == null) {
                return;
            }
            long millis = Math.max(0, java.time.Duration.between(clock.instant(), identity.expiresAt()).toMillis());
            scheduler.schedule(() -> {
                LOG.info("event=agent_token_expired node={} group={} action=\"stream ended; the agent reconnects "
                        + "with its current token\"", node, group);
                stream.close(Status.UNAUTHENTICATED.withDescription("the token this stream was opened with has "
                        + "expired; reconnect with the current token"));
                ended();
            }, millis, TimeUnit.MILLISECONDS);
        }

        // The stream to the leader for this agent (non-leader replicas only), reopened after a leader change.
        private synchronized Optional<LeaderLink.Upstream> upstream() {
            if (leaderLink == null || ended) {
                return Optional.empty();
            }
            if (upstream != null && leaderLink.current(upstream)) {
                return Optional.of(upstream);
            }
            if (upstream != null) {
                upstream.close();
            }
            if (identity == null) {
                return Optional.empty();
            }
            upstream = leaderLink.open(node, identity.token(), this::forwardGrant, () -> { }).orElse(null);
            return Optional.ofNullable(upstream);
        }

        private void forwardGrant(TieBreakGrant grant) {
            stream.send(ControllerMessage.newBuilder()
                    .setEpoch(distributor.epoch())
                    .setRevision(subscription.lastSentRevision())
                    .setTieBreak(grant)
                    .build());
        }

        private void tieBreak(TieBreakRequest request) {
            if (!arbiter.leading()) {
                Optional<LeaderLink.Upstream> up = upstream();
                if (up.isPresent()) {
                    LOG.debug("event=tie_break_forwarded group={} node={}", group, node);
                    up.get().send(AgentMessage.newBuilder().setTieBreakRequest(request).build());
                    return;
                }
            }
            Optional<GroupModel> model = directory.model(group);
            Set<String> expected = model.map(m -> (Set<String>) new TreeSet<>(m.expected().keySet())).orElse(Set.of());
            java.time.Duration lease = settings.minTieLease();
            if (model.isPresent() && model.get().policy() != null) {
                java.time.Duration threeBeats = model.get().policy().timings().heartbeatInterval().multipliedBy(3);
                lease = threeBeats.compareTo(lease) > 0 ? threeBeats : lease;
            }
            TieBreakDecision decision = arbiter.decide(group, node, new TreeSet<>(request.getSideList()), expected,
                    lease);
            LOG.info("event=tie_break group={} node={} side={} granted={} reason=\"{}\"", group, node,
                    request.getSideList(), decision.granted(), decision.reason());
            stream.send(ControllerMessage.newBuilder()
                    .setEpoch(distributor.epoch())
                    .setRevision(subscription.lastSentRevision())
                    .setTieBreak(TieBreakGrant.newBuilder()
                            .setRequestId(request.getRequestId())
                            .setGranted(decision.granted())
                            .setValidFor(Duration.newBuilder()
                                    .setSeconds(decision.validFor().getSeconds())
                                    .setNanos(decision.validFor().getNano()))
                            .setReason(decision.reason()))
                    .build());
        }

        @Override
        public void onError(Throwable t) {
            LOG.debug("event=agent_stream_error node={} status={}", node, Status.fromThrowable(t).getCode());
            ended();
        }

        @Override
        public void onCompleted() {
            stream.complete();
            ended(true);
        }

        void ended() {
            ended(false);
        }

        // completed: the agent closed its stream on purpose, so the upstream is half-closed and what was forwarded
        // (a final report) still reaches the leader; otherwise it is cancelled.
        private void ended(boolean completed) {
            synchronized (this) {
                if (ended) {
                    return;
                }
                ended = true;
            }
            if (identity != null && identity.podUid() != null) {
                podStreamEnded(identity.podUid());
            }
            stream.cancelled();
            synchronized (this) {
                if (upstream != null) {
                    if (completed) {
                        upstream.finish();
                    } else {
                        upstream.close();
                    }
                }
            }
            ConfigDistributor.Subscription s = subscription;
            if (s != null) {
                s.cancel();
                reports.disconnected(node, group);
                LOG.info("event=agent_disconnected node={} group={}", node, group);
            }
        }
    }
}
