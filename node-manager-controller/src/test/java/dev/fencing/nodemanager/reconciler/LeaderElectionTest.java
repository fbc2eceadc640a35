package dev.fencing.nodemanager.reconciler;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.testing.CrudMockClient;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReviewBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.InputStream;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

@CrudMockClient
class LeaderElectionTest {

    private static final String NS = "fencing-system";

    KubernetesClient client;
    KubernetesMockServer server;
    private NodeManager manager;

    @AfterEach
    void tearDown() {
        if (manager != null) {
            manager.close();
        }
    }

    private void crdAndRulesReview() throws Exception {
        try (InputStream crd = getClass().getResourceAsStream("/META-INF/fabric8/nodegroups.deckhouse.io-v1.yml")) {
            client.apiextensions().v1().customResourceDefinitions()
                    .resource(client.getKubernetesSerialization().unmarshal(crd, CustomResourceDefinition.class))
                    .create();
        }
        // JOSDK checks Lease permissions with a SelfSubjectRulesReview, which the CRUD mock cannot answer.
        server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews")
                .andReturn(201, new SelfSubjectRulesReviewBuilder().withNewStatus().addNewResourceRule()
                        .withApiGroups("coordination.k8s.io").withResources("leases")
                        .withVerbs("create", "update", "get").endResourceRule().withIncomplete(false).endStatus()
                        .build())
                .always();
    }

    /**
     * A replica that takes over the Lease drops the reports it holds of agents not connected to it: the agent may
     * have reported to the previous leader since (disarmed, its label removed), and an old "armed" must not count
     * as its last word in the fenced-node rule.
     */
    @Test
    void aNewLeaderDropsTheReportsOfAgentsNotConnectedToIt() throws Exception {
        crdAndRulesReview();
        // The other replica's Lease must outlast start() and the report recorded below, which can take seconds
        // on a loaded machine; the leadership await (20 s) still covers its expiry.
        java.time.ZonedDateTime now = java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC);
        client.leases().inNamespace(NS).resource(new io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder()
                .withNewMetadata().withName("node-manager-controller").withNamespace(NS).endMetadata()
                .withNewSpec().withHolderIdentity("another-replica").withLeaseDurationSeconds(8)
                .withAcquireTime(now).withRenewTime(now).endSpec().build()).create();
        ControllerConfig b = ControllerConfig.forTests(NS);
        ControllerConfig config = new ControllerConfig(NS, 0, -1, b.gossipPort(), b.agentImage(),
                b.agentControllerAddress(), b.agentResources(), b.agentTolerations(), b.agentPriorityClass(), true,
                "node-manager-controller", null, null, Duration.ofSeconds(1), Duration.ofSeconds(30), 100, 100,
                Duration.ofSeconds(30), 1, true, "127.0.0.1");
        manager = new NodeManager(client, config, dev.fencing.nodemanager.grpc.StreamLimits.DEFAULTS,
                dev.fencing.nodemanager.reconciler.WriteLimits.DEFAULTS,
                new dev.fencing.nodemanager.config.LeaderElectionTimings(Duration.ofSeconds(2), Duration.ofSeconds(1),
                        Duration.ofMillis(250)), InstantSource.system(),
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).start();
        assertThat(manager.leadership().isLeader()).isFalse();
        // A report this replica holds from before it leads; its agent's stream is gone.
        manager.reports().record("workers-9", "workers", dev.fencing.proto.nodemanager.v1.AgentReport.newBuilder()
                .setArmed(true).build(), java.time.Instant.now());

        await().atMost(20, TimeUnit.SECONDS).until(() -> manager.leadership().isLeader());
        await().atMost(5, TimeUnit.SECONDS).until(() -> manager.reports().latest("workers-9").isEmpty());
    }

    @Test
    void withLeaderElectionOnALeaseTheLeaderReconcilesAndServesAgents() throws Exception {
        crdAndRulesReview();
        ControllerConfig b = ControllerConfig.forTests(NS);
        ControllerConfig config = new ControllerConfig(NS, 0, -1, b.gossipPort(), b.agentImage(),
                b.agentControllerAddress(), b.agentResources(), b.agentTolerations(), b.agentPriorityClass(), true,
                "node-manager-controller", null, null, Duration.ofSeconds(1), Duration.ofSeconds(30), 100, 100,
                Duration.ofSeconds(30), 1, true, "127.0.0.1");
        manager = new NodeManager(client, config, InstantSource.system(),
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).start();
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName("workers").build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing().withMode("Watchdog")));
        client.resource(g).create();
        client.nodes().resource(node("workers-1", "workers", 1)).create();

        await().atMost(20, TimeUnit.SECONDS).until(() -> manager.leadership().isLeader());
        Lease lease = client.leases().inNamespace(NS).withName("node-manager-controller").get();
        assertThat(lease.getSpec().getHolderIdentity()).isNotBlank();
        await().atMost(20, TimeUnit.SECONDS).until(() ->
                client.apps().daemonSets().inNamespace(NS).withName("fencing-agent-workers").get() != null);
        await().atMost(20, TimeUnit.SECONDS).untilAsserted(() -> assertThat(
                client.resources(NodeGroup.class).withName("workers").get().getStatus().getExpected()).isEqualTo(1));
    }
}
