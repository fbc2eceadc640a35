package dev.fencing.nodemanager;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.nodemanager.cache.ClusterCache;
import dev.fencing.nodemanager.cache.LeaderLeaseWatch;
import dev.fencing.nodemanager.cache.Leadership;
import dev.fencing.nodemanager.cache.NodeLeases;
import dev.fencing.nodemanager.config.ApiServerProbes;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.config.LeaderElectionTimings;
import dev.fencing.nodemanager.dependent.AgentDaemonSets;
import dev.fencing.nodemanager.dependent.GossipKeyringSecrets;
import dev.fencing.nodemanager.grpc.AgentControlServer;
import dev.fencing.nodemanager.grpc.StreamLimits;
import dev.fencing.nodemanager.reconciler.WriteLimits;
import dev.fencing.nodemanager.grpc.AgentControlService;
import dev.fencing.nodemanager.grpc.LeaderLink;
import dev.fencing.nodemanager.grpc.auth.AgentAuthInterceptor;
import dev.fencing.nodemanager.grpc.auth.AgentAuthenticator;
import dev.fencing.nodemanager.grpc.auth.AgentPodAuthorizer;
import dev.fencing.nodemanager.grpc.auth.KubernetesTokenReviewer;
import dev.fencing.nodemanager.grpc.auth.ServingCertificate;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import dev.fencing.nodemanager.health.HealthServer;
import dev.fencing.nodemanager.metrics.ControllerMetrics;
import dev.fencing.nodemanager.peervote.PeersReachable;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.escalation.CachedEscalationSources;
import dev.fencing.nodemanager.escalation.FenceStageExecutor;
import dev.fencing.nodemanager.escalation.FencingAdmission;
import dev.fencing.nodemanager.escalation.KdumpListener;
import dev.fencing.nodemanager.escalation.KdumpSightings;
import dev.fencing.nodemanager.escalation.KubernetesSecretSource;
import dev.fencing.nodemanager.escalation.NodeFencingController;
import dev.fencing.nodemanager.escalation.PowerFencingSettings;
import dev.fencing.nodemanager.escalation.ProcessFenceAgentRunner;
import dev.fencing.nodemanager.reconciler.ClusterWriter;
import dev.fencing.nodemanager.reconciler.NodeGroupReconciler;
import dev.fencing.nodemanager.storm.CachedStormCensus;
import dev.fencing.nodemanager.storm.StormGuard;
import dev.fencing.nodemanager.report.AgentReports;
import dev.fencing.nodemanager.status.NodeFacts;
import dev.fencing.nodemanager.status.GroupStatusStore;
import dev.fencing.nodemanager.status.LastValidConfigStore;
import dev.fencing.nodemanager.status.NodeGroupStatusTarget;
import dev.fencing.nodemanager.view.GroupView;
import dev.fencing.nodemanager.stream.ConfigDistributor;
import dev.fencing.nodemanager.tiebreak.TieBreakArbiter;
import dev.fencing.probes.EndpointServer;
import dev.fencing.probes.ProbeServer;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfigurationBuilder;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.File;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller process's parts wired together: informer caches and the config publisher, the AgentControl server
 * (every replica), the JOSDK operator with the nodegroup-status-controller (leader only), the ControlPlane
 * tie-break arbiter, health and metrics. Used by {@link NodeManagerOperator} and by the operator tests.
 */
public final class NodeManager implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NodeManager.class);
    /** A positive TokenReview is reused at most this long (and never past the token's expiry). */
    private static final Duration AUTH_CACHE = Duration.ofSeconds(60);

    private final KubernetesClient client;
    private final ControllerConfig config;
    private final LeaderElectionTimings electionTimings;
    private final PrometheusMeterRegistry registry;
    private final InstantSource clock;
    private final ConfigDistributor distributor;
    private final AgentReports reports = new AgentReports();
    private final Leadership leadership = new Leadership();
    private final ControllerMetrics metrics;
    private final TieBreakArbiter arbiter;
    private final ClusterCache cache;
    private final NodeLeases nodeLeases;
    private final AgentControlService service;
    private final AgentDaemonSets daemonSets;
    private final ClusterWriter writer;
    private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(1, r -> {
        Thread t = new Thread(r, "node-manager-scheduler");
        t.setDaemon(true);
        return t;
    });
    private final NodeGroupReconciler reconciler;
    private final GroupStatusStore statusStore;
    private final LastValidConfigStore lastValidConfigs;
    private final StormGuard stormGuard;
    private final LeaderLink leaderLink;
    private volatile Operator operator;
    private LeaderLeaseWatch leaderLeaseWatch;
    private final AgentAuthInterceptor authInterceptor;
    private ServingCertificate servingCertificate;
    private AgentControlServer server;
    private HealthServer health;
    // set once by serveProbes (synchronized), read by close
    private volatile EndpointServer probes;
    private volatile boolean closing;
    private PowerFencingSettings powerFencing;
    private NodeGroupStatusTarget.Mode nodeGroupStatus = NodeGroupStatusTarget.Mode.AUTO;
    private NodeFencingController nodeFencing;
    private KdumpListener kdumpListener;

    public NodeManager(KubernetesClient client, ControllerConfig config, InstantSource clock,
                       PrometheusMeterRegistry registry) {
        this(client, config, StreamLimits.DEFAULTS, WriteLimits.DEFAULTS, clock, registry);
    }

    /**
     * @param streamLimits concurrent agent streams and queued bytes per stream on this replica
     * @param writeLimits  per-node rate limits on report-driven label patches and Events
     */
    public NodeManager(KubernetesClient client, ControllerConfig config, StreamLimits streamLimits,
                       WriteLimits writeLimits, InstantSource clock, PrometheusMeterRegistry registry) {
        this(client, config, streamLimits, writeLimits, LeaderElectionTimings.DEFAULTS, clock, registry);
    }

    /**
     * @param streamLimits    concurrent agent streams and queued bytes per stream on this replica
     * @param writeLimits     per-node rate limits on report-driven label patches and Events
     * @param electionTimings the election Lease's duration, renew deadline and retry period (with leader election)
     */
    public NodeManager(KubernetesClient client, ControllerConfig config, StreamLimits streamLimits,
                       WriteLimits writeLimits, LeaderElectionTimings electionTimings, InstantSource clock,
                       PrometheusMeterRegistry registry) {
        this.client = client;
        this.config = config;
        this.electionTimings = electionTimings;
        this.registry = registry;
        this.clock = clock;
        byte[] epochBytes = new byte[8];
        new SecureRandom().nextBytes(epochBytes);
        this.distributor = new ConfigDistributor(HexFormat.of().formatHex(epochBytes), config.historyLimit(),
                config.gossipEncryption(), ApiServerProbes.from(client.getConfiguration(), config.apiServerProbeUrl()),
                clock);
        Duration leaseDuration = config.leaderElection() ? electionTimings.leaseDuration() : Duration.ZERO;
        this.arbiter = new TieBreakArbiter(System::nanoTime, config.maxTieLease(), leaseDuration,
                config.leaderElection() ? electionTimings.renewDeadline() : null);
        leadership.addListener(new Leadership.Listener() {
            @Override
            public void startedLeading() {
                arbiter.startedLeading();
                // Reports held from before, of agents whose stream to this replica has ended, may be older than what
                // the previous leader knew (the agent reconnected to it and disarmed, and it removed the label): the
                // fenced-node rule must fall back to the label for them, not take an old "armed" as the last word.
                int dropped = reports.forgetDisconnected();
                if (dropped > 0) {
                    LOG.info("event=stale_reports_dropped count={} reason=\"started leading: reports of agents not "
                            + "connected to this replica may predate what the previous leader knew\"", dropped);
                }
            }

            @Override
            public void stoppedLeading() {
                arbiter.stoppedLeading();
            }
        });
        this.cache = new ClusterCache(client, config.gossipPort(), distributor, config.namespace(),
                config.gossipEncryption(), nodeLeases = new NodeLeases(clock));
        ClusterCache networks = cache;
        // Each agent's address on every gossip network reaches its peers as a member delta.
        reports.addReportListener(r -> networks.reportedNetworkAddresses(r.node(), r.group(),
                r.report().getNetworkAddressesMap()));
        this.leaderLink = new LeaderLink(this::leaderChannel);
        this.service = new AgentControlService(distributor, cache, reports, arbiter, clock, scheduler,
                new AgentControlService.Settings(config.streamQueue(), Duration.ofSeconds(10), Duration.ofSeconds(2),
                        config.maxTieLease()), config.leaderElection() ? leaderLink : null,
                AgentControlService.HelloCheck.pods(new AgentPodAuthorizer(client, config.namespace())),
                streamLimits);
        this.authInterceptor = new AgentAuthInterceptor(new AgentAuthenticator(new KubernetesTokenReviewer(client),
                clock, AUTH_CACHE), config.security().insecurePlaintext(), config.namespace(),
                config.security().agentServiceAccount());
        this.daemonSets = new AgentDaemonSets(client, config, cache::agentDaemonSet, arbiter::grantsWaitFor);
        this.writer = new ClusterWriter(client, clock);
        ControllerMetrics metrics = new ControllerMetrics(registry, distributor, service, new GroupMeterSources());
        this.metrics = metrics;
        metrics.leadership(leadership);
        metrics.agentCallsRefused(authInterceptor);
        // A deleted group is recomputed with fencing off, so every replica drops its series.
        cache.addModelListener(m -> metrics.groupChanged(m.group(), m.fencingEnabled()));
        cache.addGroupDeletedListener(g -> scheduler.execute(() -> groupDeleted(g)));
        cache.addNodeGoneListener(n -> reports.forget(n.getMetadata().getName()));
        // A node that leaves every group (its group label removed) takes our taint with it: no group reconciles it
        // any more, so nobody would remove it when the node is back.
        cache.addNodeGoneListener(n -> scheduler.execute(() -> releaseTaint(n, "left every fencing group")));
        this.statusStore = new GroupStatusStore(client, config.namespace(), config.serverSideApply(),
                cache::statusConfigMap);
        NodeGroupReconciler reconciler = new NodeGroupReconciler(config, daemonSets,
                config.gossipEncryption() ? new GossipKeyringSecrets(client, config.namespace(),
                        cache::keyringSecret) : null, reports,
                writer, clock, leadership::isLeader, nodeLeases::renewedAt, writeLimits, stormGuard = new StormGuard(
                        config.storm(), new CachedStormCensus(cache, statusStore)), statusStore);
        LastValidConfigStore lastValidConfigs = new LastValidConfigStore(client, config.namespace(),
                config.serverSideApply(), cache::lastValidConfigMap);
        cache.lastValidConfigs(lastValidConfigs::read);
        reconciler.keepLastValidConfigs(lastValidConfigs, distributor::lastValid);
        reconciler.servedMemberSets(distributor::memberSets);
        this.lastValidConfigs = lastValidConfigs;
        metrics.writeLimits(reconciler);
        cache.addModelListener(m -> reconciler.trigger(m.group()));
        this.reconciler = reconciler;
    }

    // Followers dial the leader by pod address but verify its certificate against the Service name agents use
    // (serverName()), so one serving certificate with that DNS SAN is valid for both.
    private ManagedChannel leaderChannel(String address) {
        NettyChannelBuilder b = NettyChannelBuilder.forTarget(address).keepAliveTime(30, TimeUnit.SECONDS);
        if (config.security().insecurePlaintext()) {
            return b.usePlaintext().build();
        }
        File trust = config.security().tlsCa() != null ? config.security().tlsCa() : config.tlsCert();
        try {
            return b.sslContext(GrpcSslContexts.forClient().trustManager(trust).build())
                    .overrideAuthority(config.serverName()).build();
        } catch (SSLException e) {
            throw new IllegalStateException("cannot build TLS context for the leader link from " + trust + ": "
                    + e.getMessage(), e);
        }
    }

    // Built once the AgentControl port is bound: the leader election identity carries this replica's address.
    private Operator newOperator(String identity) {
        Operator op = new Operator(o -> {
            o.withKubernetesClient(client)
                    .withCloseClientOnStop(false)
                    // Status only: this reconciler never patches the NodeGroup itself (no finalizer, no spec).
                    // The DaemonSet is written by AgentDaemonSets, not by a JOSDK KubernetesDependentResource, so
                    // JOSDK's dependent-resource SSA switch has nothing to act on and is not set.
                    .withUseSSAToPatchPrimaryResource(config.serverSideApply())
                    .withMetrics(MicrometerMetrics.withoutPerResourceMetrics(registry));
            if (config.leaderElection()) {
                o.withLeaderElectionConfiguration(LeaderElectionConfigurationBuilder
                        .aLeaderElectionConfiguration(config.leaseName())
                        .withLeaseNamespace(config.namespace())
                        .withIdentity(identity)
                        .withLeaseDuration(electionTimings.leaseDuration())
                        .withRenewDeadline(electionTimings.renewDeadline())
                        .withRetryPeriod(electionTimings.retryPeriod())
                        .withLeaderCallbacks(new LeaderCallbacks(leadership::startLeading, this::lostLeadership,
                                this::leaderObserved))
                        .withExitOnStopLeading(false)
                        .build());
            }
        });
        op.register(reconciler);
        return op;
    }

    private void leaderObserved(String identity) {
        LOG.info("event=leader_observed identity={}", identity);
        int at = identity.lastIndexOf('@');
        if (at > 0) {
            leaderLink.leaderChanged(identity.substring(at + 1));
        }
    }

    /** {@code <hostname>@<host>:<port>}: unique per replica, and tells followers where the leader listens. */
    static String identity(String advertiseHost, int port) {
        String host = advertiseHost;
        String name;
        try {
            java.net.InetAddress local = java.net.InetAddress.getLocalHost();
            name = local.getHostName();
            if (host == null) {
                host = local.getHostAddress();
            }
        } catch (java.net.UnknownHostException e) {
            name = "node-manager-controller";
            if (host == null) {
                host = "127.0.0.1";
            }
        }
        String hostPort = host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
        return name + "-" + Long.toHexString(new SecureRandom().nextLong() >>> 16) + "@" + hostPort;
    }

    /**
     * Turns on power fencing (escalation through NodeFencingConfig stages, leader only); call before {@link #start}.
     * The NodeFencingConfig and NodeFencing CRDs must be installed.
     */
    public NodeManager powerFencing(PowerFencingSettings settings) {
        this.powerFencing = settings;
        return this;
    }

    /** Where group status goes ({@code --nodegroup-status}, default AUTO); call before {@link #start}. */
    public NodeManager nodeGroupStatus(NodeGroupStatusTarget.Mode mode) {
        this.nodeGroupStatus = java.util.Objects.requireNonNull(mode, "mode");
        return this;
    }

    /** Starts caches, the AgentControl server, the operator and the health server. */
    public NodeManager start() throws IOException {
        // Before the caches and the operator: the first reconcile must read and write status where it is kept.
        NodeGroupStatusTarget.Decision target = NodeGroupStatusTarget.decide(nodeGroupStatus, client);
        statusStore.inNodeGroup(target.write());
        cache.watchStatusConfigMaps(!target.write());
        if (target.write()) {
            LOG.info("event=nodegroup_status write=true reason=\"{}\"", target.reason());
        } else {
            LOG.warn("event=nodegroup_status write=false reason=\"{}\" detail=\"group status is not written to"
                    + " NodeGroups but kept in ConfigMaps {}/{}; read it from /debug/groups (kubectl fencing view),"
                    + " the metrics and the Events\"", target.reason(), config.namespace(),
                    GroupStatusStore.name("<group>"));
        }
        cache.start();
        if (!config.security().insecurePlaintext()) {
            servingCertificate = new ServingCertificate(config.tlsCert(), config.tlsKey(),
                    config.security().certReloadInterval(), scheduler);
        }
        server = new AgentControlServer(config.grpcPort(),
                servingCertificate == null ? null : servingCertificate.credentials(), service, authInterceptor)
                .start();
        String identity = identity(config.advertiseHost(), server.port());
        leaderLink.self(identity.substring(identity.lastIndexOf('@') + 1));
        if (config.leaderElection()) {
            // Before the operator starts, so the acquiring write is seen. renewTime is written by the elector with
            // the system clock, so its age is taken on that clock (not on the injected status clock).
            leaderLeaseWatch = new LeaderLeaseWatch(client, config.namespace(), config.leaseName(), identity,
                    InstantSource.system(), System::nanoTime, arbiter::leaseRenewed).start();
        }
        // Before the operator: the reconciler must know from its first pass which taints power fencing owns.
        if (powerFencing != null) {
            KdumpSightings sightings = new KdumpSightings();
            if (powerFencing.kdumpPort() >= 0) {
                kdumpListener = KdumpListener.start(null, powerFencing.kdumpPort(), sightings, clock,
                        cache::nodeAddress);
                metrics.kdump(kdumpListener);
            }
            nodeFencing = new NodeFencingController(client, new FenceStageExecutor(
                    new ProcessFenceAgentRunner(powerFencing.agentsDir()), new KubernetesSecretSource(client), clock,
                    identity), writer, new CachedEscalationSources(cache, this::groupStatus, reports,
                    nodeLeases, config.reportStaleAfter(), clock), sightings, FencingAdmission.of(stormGuard), leadership::isLeader, clock,
                    identity,
                    config.reportStaleAfter(), powerFencing.interval(), powerFencing.workers())
                    // The tie grants' honest-leadership rule; reports forwarded by followers within reportStaleAfter.
                    .honestLeadership(arbiter::leadershipDoubt).holdAfterLeading(config.reportStaleAfter())
                    .retainClosedRecords(powerFencing.recordRetention()).start();
            reconciler.taintOwnedElsewhere(nodeFencing::ownsTaint);
            metrics.powerFencing(nodeFencing);
        }
        operator = newOperator(identity);
        operator.start();
        if (!config.leaderElection()) {
            leadership.startLeading();
        }
        if (config.healthPort() >= 0) {
            health = new HealthServer(config.healthPort(), this::livenessProblem, this::readinessProblem, registry)
                    .groupViews(this::groupViewJson).start();
        }
        LOG.info("event=started epoch={} grpc_port={} health_port={} leader_election={} server_side_apply={}",
                distributor.epoch(), server.port(), health == null ? -1 : health.port(), config.leaderElection(),
                config.serverSideApply());
        return this;
    }

    /** A group's view from this replica's caches and reports, as JSON; empty when the caches know no such group. */
    private Optional<String> groupViewJson(String group) {
        return groupView(group).map(v -> client.getKubernetesSerialization().asJson(v));
    }

    /**
     * A group's view from this replica's caches and reports, with its status (see {@link GroupView#status()}); empty
     * when the caches know no such group. What {@code /debug/groups/<group>} answers.
     */
    public Optional<GroupView> groupView(String group) {
        return cache.model(group).map(m -> GroupView.of(m, reports::latest, leadership.isLeader(), clock.instant(),
                config.reportStaleAfter()).withStatus(groupStatus(group).orElse(null))
                .withHeldBack(leadership.isLeader() ? reconciler.heldBack(group) : Map.of()));
    }

    /**
     * The group's status: what this replica computed last when it leads, else what the leader kept (a status carrying
     * observedGeneration, in the NodeGroup or, where the CRD's owner defines the status, in its ConfigMap).
     */
    private Optional<NodeGroupStatus> groupStatus(String group) {
        Optional<NodeGroupStatus> computed = leadership.isLeader() ? reconciler.status(group) : Optional.empty();
        return computed.or(() -> cache.nodeGroup(group).flatMap(statusStore::read)
                .filter(NodeGroupStatusTarget::writtenByController));
    }

    /** The per-group meters' readings: this replica's caches, reports and tie-break arbiter. */
    private final class GroupMeterSources implements ControllerMetrics.GroupSources {

        @Override
        public Optional<GroupView> view(String group) {
            return groupView(group);
        }

        @Override
        public int fencedNodes(String group) {
            return groupStatus(group).map(NodeGroupStatus::getFencedNodes).map(java.util.List::size).orElse(0);
        }

        @Override
        public int outOfServiceTaints(String group) {
            return (int) cache.nodesOf(group).stream().filter(n -> NodeFacts.of(n, null).outOfServiceByUs()).count();
        }

        @Override
        public long tieGrants(String group) {
            return arbiter.newGrants(group);
        }

        @Override
        public boolean specInvalid(String group) {
            return cache.model(group).map(m -> m.fencingEnabled() && !m.valid()).orElse(false);
        }
    }

    /** The AgentControl port. */
    public int grpcPort() {
        return server.port();
    }

    /** The bound fence_kdump UDP port; -1 without a listener. */
    public int kdumpPort() {
        return kdumpListener == null ? -1 : kdumpListener.port();
    }

    /** The health/metrics port, or -1 when off. */
    public int healthPort() {
        return health == null ? -1 : health.port();
    }

    /** The config distributor (tests, benchmark). */
    public ConfigDistributor distributor() {
        return distributor;
    }

    /** The AgentControl service (tests, benchmark). */
    public AgentControlService service() {
        return service;
    }

    /** Agent reports held by this replica. */
    public AgentReports reports() {
        return reports;
    }

    /**
     * The storm guard: every fencing action (taint, Node deletion, power stage) asks it first, and tells it when the
     * fencing is over.
     */
    public StormGuard stormGuard() {
        return stormGuard;
    }

    /** The kubelets' Lease renewals as this replica saw them (tests). */
    public NodeLeases nodeLeases() {
        return nodeLeases;
    }

    /** Leadership of this replica. */
    public Leadership leadership() {
        return leadership;
    }

    /** Why this replica is not healthy (its liveness probe's 503), or empty. */
    public Optional<String> livenessProblem() {
        Operator op = operator;
        if (!cache.healthy()) {
            return Optional.of("the Node and NodeGroup informers are not watching");
        }
        if (op == null || !op.getRuntimeInfo().allEventSourcesAreHealthy()) {
            return Optional.of("the operator's event sources are not healthy");
        }
        return Optional.empty();
    }

    /** Why this replica is not ready (its readiness probe's 503), or empty. */
    public Optional<String> readinessProblem() {
        Operator op = operator;
        if (op == null || !op.getRuntimeInfo().isStarted()) {
            return Optional.of("the operator has not started");
        }
        if (server == null) {
            return Optional.of("AgentControl is not listening");
        }
        if (!cache.healthy()) {
            return Optional.of("the Node and NodeGroup informers are not watching");
        }
        return Optional.empty();
    }

    /**
     * Serves the kubelet's {@code /healthz} and {@code /readyz} on {@code port} of every address of the pod (0: any
     * free port), apart from the health and metrics port, so that scrapes and debug views never share a thread or
     * a connection cap with the kubelet: a {@link ProbeServer} bounds every connection in time and their number, so
     * holding connections gets no replica restarted. Closed with this manager.
     *
     * @return the bound port
     * @throws IOException naming the port when it cannot bind
     */
    public synchronized int serveProbes(int port) throws IOException {
        if (probes != null) {
            throw new IllegalStateException("probes already served on port " + probes.port());
        }
        EndpointServer p = ProbeServer.create(null, port, this::livenessProblem, this::readinessProblem);
        p.start();
        probes = p;
        return p.port();
    }

    // A deleted NodeGroup: the API server's garbage collector removes the DaemonSet through its ownerReference;
    // the leader also deletes it (and the fencing labels) explicitly, which is what happens without a GC.
    private void groupDeleted(NodeGroup deleted) {
        if (!leadership.isLeader()) {
            return;
        }
        String group = deleted.getMetadata().getName();
        daemonSets.groupDeleted(group, deleted.getMetadata().getUid());
        statusStore.delete(group, deleted.getMetadata().getUid());
        lastValidConfigs.delete(group, deleted.getMetadata().getUid());
        for (Node n : cache.nodesOf(group)) {
            Map<String, String> labels = n.getMetadata().getLabels();
            Map<String, String> remove = new HashMap<>();
            if (labels.containsKey(NodeLabels.FENCING_ENABLED)) {
                remove.put(NodeLabels.FENCING_ENABLED, null);
            }
            if (labels.containsKey(NodeLabels.FENCING_MODE)) {
                remove.put(NodeLabels.FENCING_MODE, null);
            }
            if (!remove.isEmpty()) {
                writer.patchLabels(n.getMetadata().getName(), remove);
            }
            releaseTaint(n, "group " + group + " was deleted");
            PeersReachable.withdrawal(n, "group " + group + " was deleted (no peer vote)", clock.instant())
                    .ifPresent(ops -> writer.patchNodeStatus(n.getMetadata().getName(), ops));
        }
    }

    /**
     * Removes our out-of-service taint from {@code n} (leader only), when no group reconciles the node any more. The
     * taint exists to move the workloads of a node that is gone; they moved when it was added. Kept, it would hold
     * the node's workloads off for good once it is back, since nothing would remove it. While the node is still
     * down, Kubernetes' own unreachable taint keeps new pods away.
     */
    private void releaseTaint(Node n, String why) {
        if (!leadership.isLeader() || !NodeFacts.of(n, null).outOfServiceByUs()
                || client.nodes().withName(n.getMetadata().getName()).get() == null) {
            return;
        }
        LOG.warn("event=out_of_service_released node={} reason=\"{}\" detail=\"our {} taint goes with the group's "
                + "fencing\"", n.getMetadata().getName(), why, NodeFacts.OUT_OF_SERVICE_TAINT);
        writer.setOutOfService(n.getMetadata().getName(), false);
    }

    // JOSDK cannot resume event processing after losing the Lease, so a deposed leader exits and restarts as a
    // follower (agents reconnect to another replica meanwhile and run on their cached config). On our own shutdown
    // losing the Lease is expected.
    private void lostLeadership() {
        leadership.stopLeading();
        if (!closing) {
            LOG.error("event=leadership_lost action=exit reason=\"JOSDK cannot restart event processing\"");
            new Thread(() -> System.exit(1), "exit-on-lost-leadership").start();
        }
    }

    @Override
    public void close() {
        closing = true;
        if (nodeFencing != null) {
            nodeFencing.close();
        }
        if (kdumpListener != null) {
            kdumpListener.close();
        }
        metrics.close();
        if (health != null) {
            health.close();
        }
        EndpointServer p = probes;
        if (p != null) {
            p.close();
        }
        if (operator != null) {
            operator.stop();
        }
        leaderLink.close();
        if (leaderLeaseWatch != null) {
            leaderLeaseWatch.close();
        }
        if (server != null) {
            server.close();
        }
        if (servingCertificate != null) {
            servingCertificate.close();
        }
        cache.close();
        scheduler.shutdownNow();
    }
}
