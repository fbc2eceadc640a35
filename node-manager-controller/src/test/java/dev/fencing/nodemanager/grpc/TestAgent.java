package dev.fencing.nodemanager.grpc;

import dev.fencing.nodemanager.grpc.auth.BearerTokenCredentials;
import dev.fencing.proto.nodemanager.v1.AgentControlGrpc;
import dev.fencing.proto.nodemanager.v1.AgentHello;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.ConfigDelta;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.Member;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A raw AgentControl client for controller tests: says hello, then records every controller message. */
public final class TestAgent implements AutoCloseable {

    public final BlockingQueue<ControllerMessage> received = new LinkedBlockingQueue<>();
    public final CompletableFuture<Status> closed = new CompletableFuture<>();
    private final ClientCallStreamObserver<AgentMessage> requests;

    private TestAgent(Channel channel, String node, String epoch, long revision, boolean reading) {
        this(channel, node, epoch, revision, reading, null);
    }

    private TestAgent(Channel channel, String node, String epoch, long revision, boolean reading, String token) {
        Holder holder = new Holder();
        AgentControlGrpc.AgentControlStub stub = AgentControlGrpc.newStub(channel);
        if (token != null) {
            stub = stub.withCallCredentials(new BearerTokenCredentials(token));
        }
        stub.connect(new ClientResponseObserver<AgentMessage, ControllerMessage>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<AgentMessage> stream) {
                holder.stream = stream;
                if (!reading) {
                    stream.disableAutoRequestWithInitial(0);
                }
            }

            @Override
            public void onNext(ControllerMessage value) {
                received.add(value);
            }

            @Override
            public void onError(Throwable t) {
                closed.complete(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                closed.complete(Status.OK);
            }
        });
        requests = holder.stream;
        requests.onNext(AgentMessage.newBuilder().setHello(AgentHello.newBuilder().setNodeName(node)
                .setAgentVersion("test").setEpoch(epoch).setLastRevision(revision)).build());
    }

    /** Connects as {@code node} holding nothing. */
    public static TestAgent connect(Channel channel, String node) {
        return new TestAgent(channel, node, "", 0, true);
    }

    /** Connects as {@code node} with {@code token} as its bearer token. */
    public static TestAgent connect(Channel channel, String node, String token) {
        return new TestAgent(channel, node, "", 0, true, token);
    }

    /** Connects as {@code node} presenting the (epoch, revision) it holds. */
    public static TestAgent resume(Channel channel, String node, String epoch, long revision) {
        return new TestAgent(channel, node, epoch, revision, true);
    }

    /** Connects and never reads: its messages pile up at the controller. */
    public static TestAgent stalled(Channel channel, String node) {
        return new TestAgent(channel, node, "", 0, false);
    }

    /** Sends a message on the stream. */
    public synchronized void send(AgentMessage message) {
        requests.onNext(message);
    }

    /** The next controller message, failing after 5 s. */
    public ControllerMessage next() throws InterruptedException {
        ControllerMessage m = received.poll(5, TimeUnit.SECONDS);
        if (m == null) {
            throw new AssertionError("no controller message within 5s");
        }
        return m;
    }

    /** Closes the stream on purpose (half-close), as an agent does after its final report. */
    /**
     * Applies every config message queued so far to {@code members} (name → member): a full config replaces them,
     * {@code member_upserted} and {@code member_removed} change one. Other messages are consumed and ignored.
     */
    public void applyMemberChanges(Map<String, Member> members) throws InterruptedException {
        ControllerMessage m;
        while ((m = received.poll(50, TimeUnit.MILLISECONDS)) != null) {
            if (m.hasFull()) {
                members.clear();
                m.getFull().getMembersList().forEach(x -> members.put(x.getName(), x));
            } else if (m.getDelta().hasMemberUpserted()) {
                members.put(m.getDelta().getMemberUpserted().getName(), m.getDelta().getMemberUpserted());
            } else if (m.getDelta().getChangeCase() == ConfigDelta.ChangeCase.MEMBER_REMOVED) {
                members.remove(m.getDelta().getMemberRemoved());
            }
        }
    }

    public synchronized void finish() {
        requests.onCompleted();
    }

    @Override
    public void close() {
        requests.cancel("test done", null);
    }

    private static final class Holder {
        ClientCallStreamObserver<AgentMessage> stream;
    }
}
