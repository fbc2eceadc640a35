package dev.fencing.agent.control;

import dev.fencing.agent.quorum.TieBreaker;
import dev.fencing.proto.nodemanager.v1.AgentControlGrpc;
import dev.fencing.proto.nodemanager.v1.AgentHello;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.TieBreakRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's side of {@code nodemanager.v1.AgentControl.Connect}: keeps one stream to the controller, applies full
 * and delta configs, persists the last materialised config atomically in the state dir, sends the latest report and
 * ControlPlane tie-break requests.
 *
 * <p>Lifecycle: {@link #start()} first delivers the config cached in the state dir (source {@code "cache"}) if it is
 * present and valid, then connects with exponential backoff and jitter. While the controller is unreachable the
 * agent keeps running on the last config it has. A delta that does not continue the held revision makes the client
 * reconnect presenting its revision, so the controller sends what was missed or a full config. A corrupted state
 * file is logged with what was wrong and ignored; the next sync replaces it.
 *
 * <p>Threading: all stream handling and every {@code onConfig} call run on one client thread, in order;
 * {@code onConfig} must not block for long. {@link #report}, {@link #connected} and the tie-breaker may be called
 * from any thread.
 */
public final class ControllerClient implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ControllerClient.class);
    /** How a stream the controller completed normally ends (the acknowledgement of a final report). */
    private static final Status CLOSED_BY_CONTROLLER = Status.UNAVAILABLE.withDescription("controller closed the stream");

    /** Backoff and deadline settings. */
    public record Options(Duration initialBackoff, Duration maxBackoff, Duration syncDeadline, Duration keepAliveTime) {
        /** 200 ms doubling up to 30 s; a stream that brings no config within 30 s is abandoned. */
        public static final Options DEFAULTS =
                new Options(Duration.ofMillis(200), Duration.ofSeconds(30), Duration.ofSeconds(30), Duration.ofSeconds(30));
    }

    private final String target;
    private final String nodeName;
    private final String agentVersion;
    private final ConfigStateFile stateFile;
    private final ConfigSink onConfig;
    private final ManagedChannel channel;
    private final AgentControlGrpc.AgentControlStub stub;
    private final Options options;
    private final ScheduledExecutorService executor;
    private final ReconnectBackoff backoff;
    private final AtomicReference<AgentReport> latestReport = new AtomicReference<>();
    private final ControlPlaneTieBreaker tieBreaker;

    // Confined to the executor thread.
    private MaterialisedConfig current;
    private long streamGeneration;
    private ClientCallStreamObserver<AgentMessage> requests;
    private ScheduledFuture<?> pendingReconnect;
    private boolean started;
    private volatile boolean synced;
    private volatile boolean closed;
    // Set once the final report is on its way: a stream that ends then completes finalAck instead of reconnecting.
    private volatile boolean finishing;
    private final java.util.concurrent.CompletableFuture<Boolean> finalAck = new java.util.concurrent.CompletableFuture<>();
    private volatile String currentEpoch = "";
    private volatile long currentRevision;
    private final boolean insecurePlaintext;

    /**
     * A client over TLS (or explicit plaintext) presenting the agent's token, as {@code endpoint} says.
     *
     * @param endpoint     controller address, CA bundle, server name, token file
     * @param nodeName     the Kubernetes node this agent runs on
     * @param agentVersion build version, sent in the hello
     * @param stateDir     where the last config is persisted
     * @param onConfig     called with every new complete config, on the client thread
     */
    public ControllerClient(ControllerEndpoint endpoint, String nodeName, String agentVersion, Path stateDir,
                            ConfigSink onConfig) {
        this(ControllerChannels.open(endpoint, nodeName, Options.DEFAULTS.keepAliveTime()), endpoint.target(),
                nodeName, agentVersion, stateDir, onConfig, Options.DEFAULTS, endpoint.insecurePlaintext());
    }

    /**
     * A client over a caller-built channel (TLS, in-process tests); the client owns and shuts down the channel.
     */
    public ControllerClient(ManagedChannel channel, String target, String nodeName, String agentVersion,
                            Path stateDir, ConfigSink onConfig, Options options) {
        this(channel, target, nodeName, agentVersion, stateDir, onConfig, options, false);
    }

    private ControllerClient(ManagedChannel channel, String target, String nodeName, String agentVersion,
                             Path stateDir, ConfigSink onConfig, Options options,
                             boolean insecurePlaintext) {
        this.insecurePlaintext = insecurePlaintext;
        this.channel = channel;
        this.target = target;
        this.nodeName = nodeName;
        this.agentVersion = agentVersion;
        this.stateFile = new ConfigStateFile(stateDir);
        this.onConfig = onConfig;
        this.options = options;
        this.stub = AgentControlGrpc.newStub(channel);
        ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "controller-client-" + nodeName);
            t.setDaemon(true);
            return t;
        });
        pool.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        pool.setRemoveOnCancelPolicy(true);
        this.executor = pool;
        this.backoff = new ReconnectBackoff(options.initialBackoff(), options.maxBackoff(), ThreadLocalRandom.current());
        this.tieBreaker = new ControlPlaneTieBreaker(this::sendTieBreak, new ControlPlaneTieBreaker.ConfigIdentity() {
            @Override
            public String epoch() {
                return currentEpoch;
            }

            @Override
            public long revision() {
                return currentRevision;
            }
        });
    }

    /** Delivers the cached config (if any and valid), then connects. Idempotent. */
    public void start() {
        run(() -> {
            if (started || closed) {
                return;
            }
            started = true;
            loadCache().ifPresent(cached -> {
                current = cached;
                publishIdentity();
                LOG.info("event=config_from_cache node={} group={} epoch={} revision={} members={}", nodeName,
                        cached.config().getGroup(), cached.epoch(), cached.revision(),
                        cached.config().getMembersCount());
                deliver(cached, ConfigUpdate.SOURCE_CACHE);
            });
            connect();
        });
    }

    /** Sets the latest report; it is sent now if connected, else when the next stream has synced. Latest wins. */
    public void report(AgentReport report) {
        latestReport.set(report);
        run(this::sendLatestReport);
    }

    /** The ControlPlane tie-breaker, answering from grants received over this client's stream. */
    public TieBreaker controlPlaneTieBreaker() {
        return tieBreaker;
    }

    /** True while a stream is open and has delivered the controller's config. */
    public boolean connected() {
        return synced && !closed;
    }

    /** The controller address this client connects to. */
    public String target() {
        return target;
    }

    /**
     * The clean stop (SIGTERM): sends {@code report} marked {@code final_report} as the stream's last message,
     * half-closes the stream and waits, at most {@code timeout}, for the controller to close its side — proof that it
     * read everything before. Only then may the stream be torn down ({@link #close()}): a controller that saw the
     * stream vanish first would take the silence for a node that fenced itself. No reconnect follows.
     *
     * @return true when the controller acknowledged the final report by closing the stream in time
     */
    public boolean finish(AgentReport report, Duration timeout) {
        if (closed) {
            return false;
        }
        AgentReport last = report.toBuilder().setFinalReport(true).build();
        latestReport.set(last);
        run(() -> {
            if (finishing) {
                return;
            }
            finishing = true;
            if (pendingReconnect != null) {
                pendingReconnect.cancel(false);
                pendingReconnect = null;
            }
            if (!synced || requests == null) {
                LOG.warn("event=final_report_not_sent node={} target={} reason=\"not connected\"", nodeName, target);
                finalAck.complete(false);
                return;
            }
            sendLatestReport();
            requests.onCompleted();
            LOG.info("event=final_report_sent node={} armed={} fencing_in_progress={}", nodeName, last.getArmed(),
                    last.getFencingInProgress());
        });
        try {
            boolean acked = finalAck.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (acked) {
                LOG.info("event=final_report_acknowledged node={}", nodeName);
            }
            return acked;
        } catch (java.util.concurrent.TimeoutException e) {
            LOG.warn("event=final_report_unacknowledged node={} waited_ms={}", nodeName, timeout.toMillis());
            return false;
        } catch (java.util.concurrent.ExecutionException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        synced = false;
        executor.execute(() -> {
            if (requests != null) {
                requests.cancel("agent shutting down", null);
            }
        });
        executor.shutdown();
        try {
            executor.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        channel.shutdownNow();
    }

    private void run(Runnable task) {
        if (closed) {
            return;
        }
        try {
            executor.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.debug("event=task_dropped node={} reason=closed", nodeName);
        }
    }

    private Optional<MaterialisedConfig> loadCache() {
        try {
            Optional<MaterialisedConfig> cached = stateFile.read();
            if (cached.isPresent() && !cached.get().config().getNodeName().equals(nodeName)) {
                LOG.error("event=state_file_ignored node={} file={} reason=\"config is for node {}\" "
                        + "action=\"fresh sync from the controller\"", nodeName, stateFile.path(),
                        cached.get().config().getNodeName());
                return Optional.empty();
            }
            return cached;
        } catch (ConfigStateFile.CorruptStateException e) {
            LOG.error("event=state_file_corrupt node={} reason=\"{}\" action=\"ignored; fresh sync from the "
                    + "controller will replace it\"", nodeName, e.getMessage());
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            LOG.error("event=state_file_unreadable node={} file={} reason=\"{}\" action=\"fresh sync from the "
                    + "controller\"", nodeName, stateFile.path(), e.toString());
            return Optional.empty();
        }
    }

    private void connect() {
        if (closed || finishing) {
            return;
        }
        pendingReconnect = null;
        long generation = ++streamGeneration;
        synced = false;
        // The agent's own backoff (with jitter) decides when to retry. Without this, a channel that failed to connect
        // during a long outage fails every new stream at once until grpc's internal backoff (up to 120 s) expires, and
        // agents resynced up to 80 s after the controller came back (ControllerOutageIT).
        channel.resetConnectBackoff();
        stub.connect(new ClientResponseObserver<AgentMessage, ControllerMessage>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<AgentMessage> requestStream) {
                onStreamStarting(generation, requestStream);
            }

            @Override
            public void onNext(ControllerMessage message) {
                run(() -> onMessage(generation, message));
            }

            @Override
            public void onError(Throwable t) {
                run(() -> onStreamEnded(generation, Status.fromThrowable(t)));
            }

            @Override
            public void onCompleted() {
                run(() -> onStreamEnded(generation, CLOSED_BY_CONTROLLER));
            }
        });
        AgentHello.Builder hello = AgentHello.newBuilder().setNodeName(nodeName).setAgentVersion(agentVersion);
        if (current != null) {
            hello.setEpoch(current.epoch()).setLastRevision(current.revision());
        }
        requests.onNext(AgentMessage.newBuilder().setHello(hello).build());
        executor.schedule(() -> {
            if (!closed && generation == streamGeneration && !synced && requests != null) {
                LOG.warn("event=sync_deadline node={} target={} after_ms={}", nodeName, target,
                        options.syncDeadline().toMillis());
                requests.cancel("no config within the sync deadline", null);
            }
        }, options.syncDeadline().toMillis(), TimeUnit.MILLISECONDS);
    }

    // Runs on the calling thread of connect(), which is the executor thread.
    private void onStreamStarting(long generation, ClientCallStreamObserver<AgentMessage> requestStream) {
        if (generation == streamGeneration) {
            requests = requestStream;
        }
    }

    private void onMessage(long generation, ControllerMessage message) {
        if (generation != streamGeneration || closed) {
            return;
        }
        switch (message.getKindCase()) {
            case FULL -> {
                if (!message.getFull().getNodeName().equals(nodeName)) {
                    LOG.error("event=config_rejected node={} reason=\"config is for node {}\"", nodeName,
                            message.getFull().getNodeName());
                    requests.cancel("config for another node", null);
                    return;
                }
                current = MaterialisedConfig.fromFull(message);
                applied("full");
            }
            case DELTA -> {
                if (current == null || !current.accepts(message)) {
                    LOG.info("event=delta_gap node={} held_epoch={} held_revision={} delta_epoch={} base_revision={} "
                            + "action=resync", nodeName, current == null ? "" : current.epoch(),
                            current == null ? 0 : current.revision(), message.getEpoch(),
                            message.getDelta().getBaseRevision());
                    resyncNow();
                    return;
                }
                current = current.apply(message);
                if (message.getDelta().getMore()) {
                    // Part of a change whose rest follows at once: nothing is handed to the agent or cached until
                    // the last part, so it never runs half of a change (a smaller member list with the old quorum
                    // size). A stream that breaks here resumes from this revision and still gets the rest.
                    LOG.debug("event=config_delta_held node={} revision={} kind={}", nodeName, current.revision(),
                            message.getDelta().getChangeCase().name().toLowerCase());
                    return;
                }
                applied("delta:" + message.getDelta().getChangeCase().name().toLowerCase());
            }
            case TIE_BREAK -> tieBreaker.onGrant(message.getTieBreak());
            case KIND_NOT_SET -> LOG.debug("event=empty_message node={}", nodeName);
        }
    }

    private void applied(String kind) {
        publishIdentity();
        // Only a config the agent takes is cached: a restart must start from the last config it ran with, not
        // from one it refused (it would then have none it can use and stay disarmed with NO_CONFIG).
        if (deliver(current, ConfigUpdate.SOURCE_CONTROLLER)) {
            persist(current);
        }
        boolean firstSync = !synced;
        synced = true;
        if (firstSync) {
            backoff.reset();
            LOG.info("event=connected node={} target={} group={} epoch={} revision={} via={}", nodeName, target,
                    current.config().getGroup(), current.epoch(), current.revision(), kind);
        } else {
            LOG.debug("event=config_applied node={} revision={} kind={}", nodeName, current.revision(), kind);
        }
        if (firstSync) {
            sendLatestReport();
        }
    }

    private boolean deliver(MaterialisedConfig config, String source) {
        try {
            return onConfig.accept(new ConfigUpdate(config.config(), config.epoch(), config.revision(), source));
        } catch (RuntimeException e) {
            LOG.error("event=config_consumer_failed node={} revision={} error=\"{}\"", nodeName, config.revision(),
                    e.toString(), e);
            return false;
        }
    }

    private void persist(MaterialisedConfig config) {
        try {
            stateFile.write(config);
        } catch (IOException | RuntimeException e) {
            LOG.error("event=state_file_write_failed node={} file={} error=\"{}\" effect=\"a restart without the "
                    + "controller would not know this config\"", nodeName, stateFile.path(), e.toString());
        }
    }

    private void publishIdentity() {
        currentEpoch = current.epoch();
        currentRevision = current.revision();
    }

    private void resyncNow() {
        long old = streamGeneration;
        streamGeneration++;
        synced = false;
        if (requests != null) {
            requests.cancel("resync", null);
        }
        LOG.debug("event=resync node={} old_stream={}", nodeName, old);
        connect();
    }

    private void onStreamEnded(long generation, Status status) {
        if (generation != streamGeneration || closed) {
            return;
        }
        if (finishing) {
            synced = false;
            requests = null;
            finalAck.complete(status == CLOSED_BY_CONTROLLER);
            return;
        }
        synced = false;
        requests = null;
        Duration delay = backoff.nextDelay();
        LOG.info("event=disconnected node={} target={} status={} description=\"{}\" hint=\"{}\" retry_in_ms={} "
                + "running_on={}", nodeName, target, status.getCode(), status.getDescription(),
                ControllerChannels.hint(status, insecurePlaintext), delay.toMillis(),
                current == null ? "no config" : "revision " + current.revision());
        if (pendingReconnect == null) {
            pendingReconnect = executor.schedule(this::connect, delay.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void sendLatestReport() {
        AgentReport report = latestReport.get();
        if (report == null || !synced || requests == null) {
            return;
        }
        if (report.getEpoch().isEmpty() && current != null) {
            report = report.toBuilder().setEpoch(current.epoch()).setAppliedRevision(current.revision()).build();
        }
        requests.onNext(AgentMessage.newBuilder().setReport(report).build());
    }

    private boolean sendTieBreak(TieBreakRequest request) {
        if (!connected()) {
            return false;
        }
        run(() -> {
            if (synced && requests != null) {
                requests.onNext(AgentMessage.newBuilder().setTieBreakRequest(request).build());
            }
        });
        return true;
    }
}
