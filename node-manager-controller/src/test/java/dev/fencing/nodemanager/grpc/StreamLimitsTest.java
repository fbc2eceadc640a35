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
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The replica's bounds on agent streams: how many at once, and how many bytes one may queue. */
class StreamLimitsTest {

    private final ConfigDistributor distributor = new ConfigDistributor("epoch-1", 1000);
    private final Map<String, GroupModel> models = new ConcurrentHashMap<>();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final List<TestAgent> agents = new ArrayList<>();
    private AgentControlService service;
    private Server server;
    private ManagedChannel channel;

    private void start(StreamLimits limits) throws Exception {
        service = new AgentControlService(distributor, new TestDirectory(models), new AgentReports(),
                new TieBreakArbiter(() -> 0L, Duration.ofSeconds(10), Duration.ZERO), InstantSource.system(),
                scheduler, new AgentControlService.Settings(100_000, Duration.ofSeconds(5), Duration.ofSeconds(2),
                        Duration.ofSeconds(10)), null, AgentControlService.HelloCheck.UNCHECKED, limits);
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

    private List<Node> publish(int n) {
        List<Node> nodes = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            nodes.add(node(String.format("w-%04d", i), "workers", i));
        }
        publish(nodes);
        return nodes;
    }

    private void publish(List<Node> nodes) {
        GroupModel model = GroupModel.from(new GroupSpecView("workers", 1, FencingSpec.DEFAULTS, List.of()), nodes,
                7946);
        models.put("workers", model);
        distributor.publish(model);
    }

    private TestAgent connect(String node) {
        TestAgent a = TestAgent.connect(channel, node);
        agents.add(a);
        return a;
    }

    @Test
    void aStreamOverTheReplicaLimitIsRefusedUntilOneEnds() throws Exception {
        start(new StreamLimits(2, 1 << 20));
        publish(3);
        TestAgent first = connect("w-0001");
        first.next();
        connect("w-0002").next();

        TestAgent third = connect("w-0003");
        Status refused = third.closed.get(5, TimeUnit.SECONDS);
        assertThat(refused.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(refused.getDescription()).contains("already serves 2 agent streams", "--max-agent-streams");
        assertThat(third.received).isEmpty();
        assertThat(service.refusedStreams()).isEqualTo(1);

        first.close();
        await().atMost(5, TimeUnit.SECONDS).until(() -> service.openStreams() == 1);
        assertThat(connect("w-0003").next().hasFull()).isTrue();
    }

    @Test
    void aStalledAgentOverItsQueuedBytesIsCutOffWhileOthersKeepReceiving() throws Exception {
        start(new StreamLimits(10, 2048));
        List<Node> nodes = publish(4);
        TestAgent stalled = TestAgent.stalled(channel, "w-0001");
        agents.add(stalled);
        TestAgent healthy = connect("w-0002");
        healthy.next();

        // The message queue (100 000) never fills; each change is ~100 bytes, so the byte bound cuts the stream
        // once the in-process transport's own buffer is full.
        for (int i = 0; i < 2000 && !stalled.closed.isDone(); i++) {
            nodes.set(3, new NodeBuilder(nodes.get(3)).editStatus().withAddresses()
                    .addNewAddress().withType("InternalIP").withAddress("198.18.1." + (i % 250)).endAddress()
                    .endStatus().build());
            publish(nodes);
            assertThat(healthy.next().getDelta().getMemberUpserted().getAddressesMap().get("InternalIP"))
                    .isEqualTo("198.18.1." + (i % 250));
        }
        Status cut = stalled.closed.get(5, TimeUnit.SECONDS);
        assertThat(cut.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(cut.getDescription()).contains("2048 bytes");
        assertThat(service.overflowedStreams()).isEqualTo(1);
        await().atMost(5, TimeUnit.SECONDS).until(() -> service.openStreams() == 1);
    }
}
