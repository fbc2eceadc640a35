package dev.fencing.nodemanager.reconciler;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.grpc.StreamLimits;
import dev.fencing.nodemanager.grpc.TestAgent;
import dev.fencing.nodemanager.grpc.auth.TestAgentPods;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** An agent whose reports flap between armed and disarmed costs a bounded number of label patches and Events. */
@CrudMockClient
class ReportWriteLimitOperatorTest {

    private static final String NS = "fencing-system";

    KubernetesMockServer server;
    KubernetesClient client;

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private NodeManager manager;
    private ManagedChannel channel;
    private TestAgentPods pods;
    private TestAgent agent;

    @BeforeEach
    void setUp() throws Exception {
        OperatorFixtures.installNodeGroupCrd(client);
        // Limits far longer than the test: every write after the first per node (and per Event reason) is held.
        manager = new NodeManager(client, ControllerConfig.forTests(NS), StreamLimits.DEFAULTS,
                new WriteLimits(Duration.ofHours(1), Duration.ofHours(1)), InstantSource.system(), registry).start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", manager.grpcPort()).usePlaintext().build();
        pods = new TestAgentPods(server, client, NS);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (agent != null) {
            agent.close();
        }
        channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        manager.close();
    }

    private void report(boolean armed) {
        agent.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(armed).setQuorumHeld(true)
                .setConfirmed(1).setExpected(1).setQuorumSize(1).setMode(FencingMode.FENCING_MODE_WATCHDOG)).build());
    }

    private Integer armedInStatus() {
        NodeGroup g = client.resources(NodeGroup.class).withName("flap").get();
        return g == null || g.getStatus() == null ? null : g.getStatus().getArmed();
    }

    private List<Event> nodeEvents() {
        return client.v1().events().inNamespace("default").list().getItems().stream()
                .filter(e -> "flap-1".equals(e.getInvolvedObject().getName())).toList();
    }

    @Test
    void aFloodOfFlappingReportsCausesABoundedNumberOfWrites() throws Exception {
        client.resource(OperatorFixtures.watchdogGroup("flap")).create();
        client.nodes().resource(node("flap-1", "flap", 1)).create();
        agent = OperatorFixtures.connectServed(channel, pods, "flap-1");

        // Each transition is seen by a reconcile (the status, which is not limited, follows it).
        int transitions = 0;
        for (int i = 0; i < 10; i++) {
            for (boolean armed : new boolean[] {true, false}) {
                report(armed);
                transitions++;
                int expected = armed ? 1 : 0;
                await().atMost(10, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(20))
                        .until(() -> Integer.valueOf(expected).equals(armedInStatus()));
            }
        }

        assertThat(transitions).isEqualTo(20);
        // Without the limit: 20 label patches and 20 Events.
        assertThat(nodeEvents()).extracting(Event::getReason).containsExactlyInAnyOrder("Armed", "Disarmed");
        // The one label patch allowed added the label; its removal is held back for the interval.
        assertThat(client.nodes().withName("flap-1").get().getMetadata().getLabels())
                .containsKey(NodeLabels.FENCING_ENABLED);
        String scrape = registry.scrape();
        // What was held back is counted (how often depends on how reconciles coalesce the reports).
        assertThat(counter(scrape, "label_patch")).isPositive();
        assertThat(counter(scrape, "event")).isPositive();
    }

    private static double counter(String scrape, String kind) {
        return scrape.lines()
                .filter(l -> l.startsWith("fencing_controller_report_writes_limited_total{kind=\"" + kind + "\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).findFirst().orElse(-1);
    }
}
