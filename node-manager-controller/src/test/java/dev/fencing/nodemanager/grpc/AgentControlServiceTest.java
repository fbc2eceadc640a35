package dev.fencing.nodemanager.grpc;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.model.GroupSpecView;
import dev.fencing.nodemanager.report.AgentReports;
import dev.fencing.nodemanager.stream.ConfigDistributor;
import dev.fencing.nodemanager.tiebreak.TieBreakArbiter;
import dev.fencing.policy.FencingSpec;
import dev.fencing.proto.nodemanager.v1.AgentControlGrpc;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ConfigDelta;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.TieBreakRequest;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AgentControlServiceTest {

    private final ConfigDistributor distributor = new ConfigDistributor("epoch-1", 1000);
    private final Map<String, GroupModel> models = new ConcurrentHashMap<>();
    private final AgentReports reports = new AgentReports();
    private final java.util.concurrent.atomic.AtomicLong fakeNanos = new java.util.concurrent.atomic.AtomicLong();
    private final TieBreakArbiter arbiter = new TieBreakArbiter(fakeNanos::get, Duration.ofSeconds(10), Duration.ZERO);
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final List<TestAgent> agents = new ArrayList<>();
    private Server server;
    private ManagedChannel channel;

    private AgentDirectory directory() {
        return new TestDirectory(models);
    }

    @BeforeEach
    void setUp() throws Exception {
        AgentControlService service = new AgentControlService(distributor, directory(), reports, arbiter,
                InstantSource.system(), scheduler, new AgentControlService.Settings(8, Duration.ofMillis(500),
                        Duration.ofSeconds(2), Duration.ofSeconds(10)));
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name).addService(service).build().start();
        channel = InProcessChannelBuilder.forName(name).build();
    }

    @AfterEach
    void tearDown() throws Exception {
        agents.forEach(TestAgent::close);
        channel.shutdownNow();
        server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        scheduler.shutdownNow();
    }

    private GroupModel publish(List<Node> nodes) {
        GroupModel model = GroupModel.from(new GroupSpecView("workers", 1, FencingSpec.DEFAULTS, List.of()), nodes,
                7946);
        models.put("workers", model);
        distributor.publish(model);
        return model;
    }

    private static List<Node> nodes(int n) {
        List<Node> out = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            out.add(node(String.format("w-%04d", i), "workers", i % 250 + 1));
        }
        return out;
    }

    private TestAgent connect(String node) {
        TestAgent a = TestAgent.connect(channel, node);
        agents.add(a);
        return a;
    }

    @Test
    void aFollowerHalfClosesItsUpstreamWhenTheAgentStopsSoTheLeaderGetsTheFinalReport() throws Exception {
        List<AgentMessage> atLeader = new CopyOnWriteArrayList<>();
        CompletableFuture<String> leaderSaw = new CompletableFuture<>();
        String leaderName = InProcessServerBuilder.generateName();
        AgentControlGrpc.AgentControlImplBase fakeLeader = new AgentControlGrpc.AgentControlImplBase() {
            @Override
            public StreamObserver<AgentMessage> connect(StreamObserver<ControllerMessage> out) {
                return new StreamObserver<>() {
                    @Override
                    public void onNext(AgentMessage m) {
                        atLeader.add(m);
                    }

                    @Override
                    public void onError(Throwable t) {
                        leaderSaw.complete("error " + Status.fromThrowable(t).getCode());
                    }

                    @Override
                    public void onCompleted() {
                        leaderSaw.complete("completed");
                        out.onCompleted();
                    }
                };
            }
        };
        Server leader = InProcessServerBuilder.forName(leaderName).addService(fakeLeader).build().start();
        LeaderLink link = new LeaderLink(address -> InProcessChannelBuilder.forName(leaderName).build());
        link.self("follower:1");
        link.leaderChanged("leader:1");
        AgentControlService follower = new AgentControlService(distributor, directory(), reports, arbiter,
                InstantSource.system(), scheduler, AgentControlService.Settings.DEFAULTS, link,
                AgentControlService.HelloCheck.UNCHECKED);
        String followerName = InProcessServerBuilder.generateName();
        // the identity the auth interceptor would have put in the call: a follower forwards only authenticated agents
        dev.fencing.nodemanager.grpc.auth.AgentIdentity identity = new dev.fencing.nodemanager.grpc.auth.AgentIdentity(
                "ns", "fencing-agent", "fencing-agent-w-0001", "uid-1", "w-0001", "token-1",
                java.time.Instant.now().plusSeconds(3600));
        io.grpc.ServerInterceptor authenticated = new io.grpc.ServerInterceptor() {
            @Override
            public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(io.grpc.ServerCall<Q, R> call,
                    io.grpc.Metadata headers, io.grpc.ServerCallHandler<Q, R> next) {
                return io.grpc.Contexts.interceptCall(io.grpc.Context.current().withValue(
                        dev.fencing.nodemanager.grpc.auth.AgentAuthInterceptor.IDENTITY, identity), call, headers, next);
            }
        };
        Server followerServer = InProcessServerBuilder.forName(followerName)
                .addService(io.grpc.ServerInterceptors.intercept(follower, authenticated)).build().start();
        ManagedChannel toFollower = InProcessChannelBuilder.forName(followerName).build();
        try {
            publish(nodes(3));
            TestAgent agent = TestAgent.connect(toFollower, "w-0001");
            agents.add(agent);
            assertThat(agent.next().hasFull()).isTrue();
            agent.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(false)
                    .setFinalReport(true)).build());
            agent.finish();

            assertThat(leaderSaw.get(5, TimeUnit.SECONDS)).isEqualTo("completed");
            assertThat(atLeader).filteredOn(AgentMessage::hasReport)
                    .extracting(m -> m.getReport().getFinalReport()).containsExactly(true);
        } finally {
            toFollower.shutdownNow();
            followerServer.shutdownNow();
            link.close();
            leader.shutdownNow();
        }
    }

    @Test
    void anAgentReceivesTheFullConfigOfItsGroupOnConnect() throws Exception {
        publish(nodes(3));
        ControllerMessage first = connect("w-0002").next();

        assertThat(first.hasFull()).isTrue();
        assertThat(first.getEpoch()).isEqualTo("epoch-1");
        assertThat(first.getFull().getGroup()).isEqualTo("workers");
        assertThat(first.getFull().getNodeName()).isEqualTo("w-0002");
        assertThat(first.getFull().getMembersList()).extracting(m -> m.getName())
                .containsExactly("w-0001", "w-0002", "w-0003");
        assertThat(first.getFull().getMembers(1).getGossipAddress()).isEqualTo("198.18.0.3:7946");
        assertThat(first.getFull().getPolicy().getQuorumSize()).isEqualTo(2);
        assertThat(first.getFull().getPolicy().getTimings().hasTStop()).isTrue();
    }

    @Test
    void aNodeChangeCostsOneSmallDeltaPerAgentWhateverTheGroupSize() throws Exception {
        int small = deltaBytesForOneAddressChange(10);
        int large = deltaBytesForOneAddressChange(1000);
        assertThat(large).isLessThanOrEqualTo(small + 4);   // only varint widths of revisions may differ
        assertThat(large).isLessThan(200);
    }

    private int deltaBytesForOneAddressChange(int n) throws Exception {
        models.clear();
        List<Node> nodes = nodes(n);
        publish(nodes);
        TestAgent agent = connect("w-0001");
        ControllerMessage full = agent.next();
        assertThat(full.getFull().getMembersCount()).isEqualTo(n);
        nodes.set(n - 1, new NodeBuilder(nodes.get(n - 1)).editStatus().addNewAddress().withType("ExternalIP")
                .withAddress("198.19.0.1").endAddress().endStatus().build());
        publish(nodes);
        ControllerMessage delta = agent.next();
        assertThat(delta.getDelta().getChangeCase()).isEqualTo(ConfigDelta.ChangeCase.MEMBER_UPSERTED);
        assertThat(delta.getDelta().getBaseRevision()).isEqualTo(full.getRevision());
        assertThat(full.getSerializedSize()).isGreaterThan(n * 20);
        agent.close();
        return delta.getSerializedSize();
    }

    @Test
    void aMaintenanceAnnotationReachesOnlyThatNodesAgent() throws Exception {
        List<Node> nodes = nodes(3);
        publish(nodes);
        TestAgent a1 = connect("w-0001");
        TestAgent a2 = connect("w-0002");
        a1.next();
        a2.next();

        nodes.set(0, new NodeBuilder(nodes.get(0)).editMetadata()
                .addToAnnotations("update.node.deckhouse.io/disruption-approved", "").endMetadata().build());
        publish(nodes);

        ControllerMessage signal = a1.next();
        assertThat(signal.getDelta().getSignals().getMaintenance().getSource())
                .isEqualTo("update.node.deckhouse.io/disruption-approved");
        assertThat(a2.received.poll(300, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void aReconnectingAgentGetsOnlyWhatItMissed() throws Exception {
        List<Node> nodes = nodes(3);
        publish(nodes);
        TestAgent first = connect("w-0001");
        ControllerMessage full = first.next();
        first.close();
        await().atMost(5, TimeUnit.SECONDS).until(() -> distributor.subscriberCounts().get("workers") == 0);

        nodes.remove(2);
        publish(nodes);
        TestAgent again = TestAgent.resume(channel, "w-0001", "epoch-1", full.getRevision());
        agents.add(again);
        List<ConfigDelta.ChangeCase> kinds = new ArrayList<>();
        long base = full.getRevision();
        ControllerMessage m;
        while ((m = again.received.poll(500, TimeUnit.MILLISECONDS)) != null) {
            assertThat(m.hasDelta()).isTrue();
            assertThat(m.getDelta().getBaseRevision()).isEqualTo(base);
            base = m.getRevision();
            kinds.add(m.getDelta().getChangeCase());
        }
        assertThat(kinds).contains(ConfigDelta.ChangeCase.MEMBER_REMOVED);
        assertThat(kinds).doesNotContain(ConfigDelta.ChangeCase.SIGNALS);   // w-0003's signals are not ours

        // Presenting an unknown epoch gets a full config instead.
        TestAgent other = TestAgent.resume(channel, "w-0002", "another-epoch", 3);
        agents.add(other);
        assertThat(other.next().hasFull()).isTrue();
    }

    @Test
    void anUpToDateAgentIsAcknowledgedWithAnEmptyDelta() throws Exception {
        publish(nodes(3));
        TestAgent first = connect("w-0001");
        ControllerMessage full = first.next();
        first.close();
        await().atMost(5, TimeUnit.SECONDS).until(() -> distributor.subscriberCounts().get("workers") == 0);

        TestAgent again = TestAgent.resume(channel, "w-0001", "epoch-1", full.getRevision());
        agents.add(again);
        ControllerMessage ack = again.next();
        assertThat(ack.getDelta().getBaseRevision()).isEqualTo(full.getRevision());
        assertThat(ack.getDelta().getChangeCase()).isEqualTo(ConfigDelta.ChangeCase.CHANGE_NOT_SET);
        assertThat(ack.getRevision()).isGreaterThan(full.getRevision());
    }

    @Test
    void aStalledAgentOverflowsAndIsCutOffWhileOthersKeepReceiving() throws Exception {
        List<Node> nodes = nodes(4);
        publish(nodes);
        TestAgent stalled = TestAgent.stalled(channel, "w-0001");
        agents.add(stalled);
        TestAgent healthy = connect("w-0002");
        healthy.next();

        int changes = 0;
        // Queue capacity is 8; in-process flow control buffers a little more. Keep changing until it overflows.
        for (int i = 0; i < 400 && !stalled.closed.isDone(); i++) {
            nodes.set(3, new NodeBuilder(nodes.get(3)).editStatus().withAddresses()
                    .addNewAddress().withType("InternalIP").withAddress("198.18.1." + (i % 250)).endAddress()
                    .endStatus().build());
            publish(nodes);
            changes++;
            assertThat(healthy.next().getDelta().getMemberUpserted().getAddressesMap().get("InternalIP"))
                    .isEqualTo("198.18.1." + (i % 250));
        }
        await().atMost(5, TimeUnit.SECONDS).until(stalled.closed::isDone);
        assertThat(stalled.closed.get().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(changes).isLessThan(400);
        assertThat(distributor.subscriberCounts().get("workers")).isEqualTo(1);
        // The connection ended on our side too: w-0001 no longer counts as connected (a key rotation would wait
        // for it for up to an hour, the token's lifetime).
        await().atMost(5, TimeUnit.SECONDS).until(() -> !reports.isConnected("w-0001"));
        assertThat(reports.isConnected("w-0002")).isTrue();
    }

    @Test
    void anAgentOfANodeOutsideEveryFencingGroupIsRefusedWithTheReason() throws Exception {
        publish(nodes(3));
        TestAgent stranger = connect("not-a-member");
        Status status = stranger.closed.get(5, TimeUnit.SECONDS);
        assertThat(status.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(status.getDescription()).contains("not-a-member").contains("node.deckhouse.io/group");
    }

    @Test
    void aNodeThatLeavesTheGroupTellsItsConnectedAgentItIsBeingRemoved() throws Exception {
        List<Node> nodes = nodes(3);
        publish(nodes);
        TestAgent leaving = connect("w-0003");
        leaving.next();
        nodes.set(2, new NodeBuilder(nodes.get(2)).editMetadata().addToLabels("node.deckhouse.io/group", "other")
                .endMetadata().build());
        publish(nodes);

        List<ControllerMessage> got = List.of(leaving.next(), leaving.next());
        assertThat(got).anyMatch(m -> m.getDelta().getMemberRemoved().equals("w-0003"));
        assertThat(got).anyMatch(m -> m.getDelta().getSignals().getBeingRemoved()
                && m.getDelta().getSignals().getRemovalReason().contains("no longer names group workers"));

        // Reconnecting, it is still served from its old group and learns it is being removed.
        leaving.close();
        TestAgent back = connect("w-0003");
        ControllerMessage full = back.next();
        assertThat(full.getFull().getSignals().getBeingRemoved()).isTrue();
    }

    @Test
    void reportsAreKeptPerNodeWithTheirReceiveTime() throws Exception {
        publish(nodes(3));
        TestAgent a = connect("w-0001");
        a.next();
        Instant before = Instant.now();
        a.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(true).setQuorumHeld(true))
                .build());
        await().atMost(5, TimeUnit.SECONDS).until(() -> reports.latest("w-0001").isPresent());
        assertThat(reports.latest("w-0001").get().report().getArmed()).isTrue();
        assertThat(reports.latest("w-0001").get().receivedAt()).isAfterOrEqualTo(before);
        assertThat(reports.isConnected("w-0001")).isTrue();
    }

    @Test
    void aTieBreakRequestToANonLeaderIsAnsweredNotGranted() throws Exception {
        publish(nodes(4));
        TestAgent a = connect("w-0001");
        ControllerMessage full = a.next();
        a.send(AgentMessage.newBuilder().setTieBreakRequest(TieBreakRequest.newBuilder().setRequestId(7)
                .addSide("w-0001").addSide("w-0002")).build());
        ControllerMessage answer = a.next();
        assertThat(answer.getTieBreak().getRequestId()).isEqualTo(7);
        assertThat(answer.getTieBreak().getGranted()).isFalse();
        assertThat(answer.getTieBreak().getReason()).isEqualTo("not leader");
        assertThat(answer.getRevision()).isEqualTo(full.getRevision());
    }

    @Test
    void theLeaderGrantsAConcurrentExactHalfSplitToExactlyOneSide() throws Exception {
        publish(nodes(4));
        arbiter.startedLeading();
        fakeNanos.addAndGet(Duration.ofSeconds(10).toNanos());
        List<TestAgent> four = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            TestAgent a = connect(String.format("w-%04d", i));
            a.next();
            four.add(a);
        }
        for (int i = 0; i < 4; i++) {
            List<String> side = i < 2 ? List.of("w-0001", "w-0002") : List.of("w-0003", "w-0004");
            four.get(i).send(AgentMessage.newBuilder().setTieBreakRequest(TieBreakRequest.newBuilder()
                    .setRequestId(100 + i).addAllSide(side)).build());
        }
        List<Boolean> granted = new ArrayList<>();
        for (TestAgent a : four) {
            ControllerMessage m = a.next();
            granted.add(m.getTieBreak().getGranted());
            if (m.getTieBreak().getGranted()) {
                assertThat(m.getTieBreak().getValidFor().getSeconds()).isGreaterThanOrEqualTo(2);
            } else {
                assertThat(m.getTieBreak().getReason()).startsWith(TieBreakArbiter.HELD_BY_OTHER_SIDE_PREFIX);
            }
        }
        boolean left = granted.get(0) && granted.get(1);
        boolean right = granted.get(2) && granted.get(3);
        assertThat(left ^ right).as("exactly one side holds the tie: %s", granted).isTrue();
        assertThat(granted.stream().filter(g -> g).count()).isEqualTo(2);
    }

    @Test
    void aStreamThatNeverSaysHelloIsEndedAfterTheHelloDeadline() throws Exception {
        publish(nodes(1));
        java.util.concurrent.CompletableFuture<Status> closed = new java.util.concurrent.CompletableFuture<>();
        io.grpc.stub.StreamObserver<AgentMessage> silent = dev.fencing.proto.nodemanager.v1.AgentControlGrpc
                .newStub(channel).connect(new io.grpc.stub.StreamObserver<>() {
                    @Override
                    public void onNext(ControllerMessage value) {
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
        Status status = closed.get(5, TimeUnit.SECONDS);
        assertThat(status.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(status.getDescription()).contains("AgentHello");
        silent.onCompleted();
    }
}
