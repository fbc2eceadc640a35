package dev.fencing.nodemanager.grpc;

import dev.fencing.nodemanager.grpc.auth.BearerTokenCredentials;
import dev.fencing.proto.nodemanager.v1.AgentControlGrpc;
import dev.fencing.proto.nodemanager.v1.AgentHello;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.TieBreakGrant;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * agent-leader-proxy: how a non-leader replica passes an agent's tie-break requests and reports on to the leader,
 * without any RPC beyond AgentControl. For each agent that needs it, the replica opens an AgentControl stream to the
 * leader under the agent's node name and forwards that agent's reports and tie-break requests on it; tie-break
 * answers come back to the agent, the leader's config messages on that stream are dropped (the agent gets its
 * config from this replica). The leader therefore sees every agent's reports (status, labels, Events) and is the
 * only one that grants ties, whichever replica the agent reached.
 */
public final class LeaderLink implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LeaderLink.class);

    private final Function<String, ManagedChannel> channelFactory;
    private volatile String self = "";
    private String leaderAddress;
    private ManagedChannel channel;
    private long generation;

    /** @param channelFactory builds a channel to {@code host:port} */
    public LeaderLink(Function<String, ManagedChannel> channelFactory) {
        this.channelFactory = channelFactory;
    }

    /** This replica's advertised address, never proxied to (known once the port is bound). */
    public synchronized void self(String address) {
        this.self = address;
    }

    /** Leader election observed a (new) leader; {@code address} is its advertised AgentControl address. */
    public synchronized void leaderChanged(String address) {
        if (address == null || address.equals(leaderAddress)) {
            return;
        }
        LOG.info("event=leader_address leader={} self={}", address, self);
        leaderAddress = address;
        generation++;
        if (channel != null) {
            channel.shutdownNow();
            channel = null;
        }
    }

    /**
     * An upstream stream to the leader for {@code node}, or empty when no other replica is known to lead.
     *
     * @param token the agent's own token: the leader authenticates and authorizes the forwarded hello with it
     */
    public synchronized Optional<Upstream> open(String node, String token, Consumer<TieBreakGrant> onGrant,
                                                Runnable onEnd) {
        if (leaderAddress == null || leaderAddress.equals(self)) {
            return Optional.empty();
        }
        if (channel == null) {
            channel = channelFactory.apply(leaderAddress);
        }
        Upstream up = new Upstream(generation, onEnd);
        // Opened from the agent's server call, whose gRPC Context is cancelled as soon as that call ends. A forked
        // context does not inherit that cancellation, so a half-closed upstream still delivers the agent's final
        // report; the upstream ends by its own finish() or close().
        Context detached = Context.current().fork();
        Context previous = detached.attach();
        try {
            connect(node, token, onGrant, up);
        } finally {
            detached.detach(previous);
        }
        up.send(AgentMessage.newBuilder().setHello(AgentHello.newBuilder().setNodeName(node)
                .setAgentVersion("proxied-by:" + self)).build());
        return Optional.of(up);
    }

    // The agent's own token goes along, so the leader runs the same identity check on the forwarded stream.
    private void connect(String node, String token, Consumer<TieBreakGrant> onGrant, Upstream up) {
        AgentControlGrpc.newStub(channel).withCallCredentials(new BearerTokenCredentials(token))
                .connect(new ClientResponseObserver<AgentMessage, ControllerMessage>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<AgentMessage> requests) {
                up.requests = requests;
            }

            @Override
            public void onNext(ControllerMessage m) {
                if (m.hasTieBreak()) {
                    onGrant.accept(m.getTieBreak());
                }
            }

            @Override
            public void onError(Throwable t) {
                Status status = Status.fromThrowable(t);
                if (status.getCode() == Status.Code.UNAUTHENTICATED
                        || status.getCode() == Status.Code.PERMISSION_DENIED) {
                    LOG.warn("event=leader_link_refused node={} status={} reason=\"{}\"", node, status.getCode(),
                            status.getDescription());
                } else {
                    LOG.debug("event=leader_link_ended node={} status={}", node, status.getCode());
                }
                up.ended();
            }

            @Override
            public void onCompleted() {
                up.ended();
            }
        });
    }

    /** True while {@code up} still points at the current leader. */
    public synchronized boolean current(Upstream up) {
        return up.generation == generation && !up.ended;
    }

    @Override
    public synchronized void close() {
        if (channel != null) {
            channel.shutdownNow();
        }
    }

    /** One agent's stream to the leader. */
    public static final class Upstream {
        private final long generation;
        private final Runnable onEnd;
        private ClientCallStreamObserver<AgentMessage> requests;
        private volatile boolean ended;

        private Upstream(long generation, Runnable onEnd) {
            this.generation = generation;
            this.onEnd = onEnd;
        }

        /** Forwards a message (serialised: one sender at a time). */
        public synchronized void send(AgentMessage m) {
            if (!ended) {
                requests.onNext(m);
            }
        }

        /** Cancels the upstream stream (the agent's own stream broke off); messages in flight may be lost. */
        public synchronized void close() {
            if (!ended) {
                ended = true;
                requests.cancel("agent stream ended", null);
            }
        }

        /**
         * Half-closes the upstream stream after everything forwarded (the agent closed its own stream on purpose):
         * a cancel could drop the final report still in flight, and the leader would never learn of the clean stop.
         */
        public synchronized void finish() {
            if (!ended) {
                ended = true;
                requests.onCompleted();
            }
        }

        private void ended() {
            ended = true;
            onEnd.run();
        }
    }
}
