package dev.fencing.nodemanager.escalation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.model.TestNodes;
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.nodemanager.testing.NodeGroupCrds;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole controller with a kdump listener on the CRUD mock: a fence_kdump message counts for a node only when
 * its source is one of a Node's addresses; one from any other address (what a NAT or a Service in between leaves)
 * is counted apart, so an operator sees that the messages arrive but can never match.
 */
@CrudMockClient
class KdumpDeliveryOperatorTest {

    private static final byte[] MESSAGE = HexFormat.of().parseHex("402a301b01000000");

    KubernetesClient client;
    @TempDir
    Path agentsDir;
    private NodeManager manager;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    @AfterEach
    void tearDown() {
        if (manager != null) {
            manager.close();
        }
    }

    private double counted(String result) {
        return registry.get("fencing_controller_kdump_messages_total").tag("result", result).functionCounter()
                .count();
    }

    private void send(DatagramSocket from) throws Exception {
        from.send(new DatagramPacket(MESSAGE, MESSAGE.length, InetAddress.getLoopbackAddress(),
                manager.kdumpPort()));
    }

    @Test
    void aMessageCountsForANodeOnlyFromOneOfItsAddresses() throws Exception {
        NodeGroupCrds.install(client);
        client.nodes().resource(TestNodes.node("workers-1", "workers", 1)).create();
        manager = new NodeManager(client, ControllerConfig.forTests("ns"), InstantSource.system(), registry)
                .powerFencing(new PowerFencingSettings(agentsDir, Duration.ofSeconds(1), 1, 0)).start();
        assertThat(manager.kdumpPort()).isPositive();

        try (DatagramSocket sender = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            // 127.0.0.1 is no Node's address yet.
            send(sender);
            await().atMost(10, TimeUnit.SECONDS).until(() -> counted("unmatched") == 1);
            assertThat(counted("node")).isZero();

            // Now a Node of a group has it (as InternalIP beside its 198.18.0.1).
            client.nodes().withName("workers-1").editStatus(n -> new NodeBuilder(n).editStatus().addNewAddress()
                    .withType("InternalIP").withAddress("127.0.0.1").endAddress().endStatus().build());
            await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
                send(sender);
                assertThat(counted("node")).isPositive();
            });
            byte[] junk = "not a kdump message".getBytes();
            sender.send(new DatagramPacket(junk, junk.length, InetAddress.getLoopbackAddress(), manager.kdumpPort()));
            await().atMost(10, TimeUnit.SECONDS).until(() -> counted("invalid") == 1);
            assertThat(counted("unmatched")).isEqualTo(1);
        }
    }
}
