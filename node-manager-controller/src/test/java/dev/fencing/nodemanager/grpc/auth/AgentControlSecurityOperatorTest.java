package dev.fencing.nodemanager.grpc.auth;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.FencingWatchdog;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.config.AgentControlSecurity;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.grpc.TestAgent;
import dev.fencing.nodemanager.rbac.ApiCall;
import dev.fencing.nodemanager.rbac.ApiCallRecorder;
import dev.fencing.nodemanager.testing.CrudMockClient;
import dev.fencing.nodemanager.testing.NodeGroupCrds;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReviewBuilder;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * AgentControl over TLS with agent identities on the CRUD mock: only the group's agent pod on the node a hello
 * names gets a config (and with it the gossip keyring); a renewed serving certificate is picked up live.
 */
@CrudMockClient
class AgentControlSecurityOperatorTest {

    private static final String NS = "fencing-system";
    private static final String SERVER_NAME = "node-manager-controller." + NS + ".svc";

    KubernetesMockServer server;
    KubernetesClient client;
    @TempDir
    Path dir;
    private TestPki pki;
    private Path cert;
    private Path key;
    private Path ca;
    private NodeManager manager;
    private PrometheusMeterRegistry registry;
    private ApiCallRecorder recorder;
    private KubernetesClient controllerClient;
    private TestAgentPods pods;
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<TestAgent> agents = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        NodeGroupCrds.install(client);
        pki = new TestPki("fencing-ca", 11);
        ca = pki.writeCa(dir.resolve("ca.crt"));
        Path[] serving = pki.issue(dir, "tls", SERVER_NAME);
        cert = serving[0];
        key = serving[1];
        // With leader election on a Lease, as installed. JOSDK checks Lease permissions with a
        // SelfSubjectRulesReview, which the CRUD mock cannot answer.
        server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews")
                .andReturn(201, new SelfSubjectRulesReviewBuilder().withNewStatus().addNewResourceRule()
                        .withApiGroups("coordination.k8s.io").withResources("leases")
                        .withVerbs("create", "update", "get").endResourceRule().withIncomplete(false).endStatus()
                        .build())
                .always();
        ControllerConfig b = ControllerConfig.forTests(NS);
        ControllerConfig config = new ControllerConfig(NS, 0, -1, b.gossipPort(), b.agentImage(),
                b.agentControllerAddress(), b.agentResources(), b.agentTolerations(), b.agentPriorityClass(), true,
                "node-manager-controller", null, null, Duration.ofMillis(500), Duration.ofSeconds(30), 100, 100,
                Duration.ofSeconds(30), 1, true, "127.0.0.1").withSecurity(cert.toFile(), key.toFile(),
                new AgentControlSecurity(false, ca.toFile(), "fencing-ca", "", Duration.ofMillis(200)));
        recorder = new ApiCallRecorder(server);
        controllerClient = recorder.controllerClient(client);
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        manager = new NodeManager(controllerClient, config, InstantSource.system(), registry).start();
        pods = new TestAgentPods(server, client, NS);
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName("workers").build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing().withMode("Watchdog")
                .withWatchdog(new FencingWatchdog().withTimeout("60s"))));
        client.resource(g).create();
        for (int i = 1; i <= 2; i++) {
            client.nodes().resource(node("workers-" + i, "workers", i)).create();
        }
        await().atMost(20, TimeUnit.SECONDS).until(() -> manager.distributor().ready("workers"));
    }

    @AfterEach
    void tearDown() throws Exception {
        agents.forEach(TestAgent::close);
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        }
        manager.close();
        controllerClient.close();
        // Every call the controller made in any of these scenarios must be allowed by the chart's roles.
        recorder.assertChartAllowsEveryCall(NS);
    }

    private ManagedChannel tlsChannel() throws Exception {
        ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", manager.grpcPort(),
                TlsChannelCredentials.newBuilder().trustManager(ca.toFile()).build())
                .overrideAuthority(SERVER_NAME).build();
        channels.add(c);
        return c;
    }

    private TestAgent hello(String node, String token) throws Exception {
        TestAgent a = token == null ? TestAgent.connect(tlsChannel(), node)
                : TestAgent.connect(tlsChannel(), node, token);
        agents.add(a);
        return a;
    }

    private Status refusal(TestAgent a) throws Exception {
        Status status = a.closed.get(10, TimeUnit.SECONDS);
        assertThat(a.received).as("a refused agent gets no config and no keyring").isEmpty();
        return status;
    }

    @Test
    void theGroupsAgentPodOnItsNodeGetsTheConfigWithTheKeyring() throws Exception {
        TestAgent a = hello("workers-1", pods.token("workers-1"));
        ControllerMessage first = a.next();
        assertThat(first.hasFull()).isTrue();
        assertThat(first.getFull().getNodeName()).isEqualTo("workers-1");
        assertThat(first.getFull().hasKeyring()).isTrue();
    }

    @Test
    void reconcilesFindTheKeyringSecretAndTheAgentDaemonSetInTheCacheWithoutARequestPerReconcile()
            throws Exception {
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.distributor().ready("workers")
                && client.secrets().inNamespace(NS).withName("fencing-gossip-workers").get() != null
                && client.apps().daemonSets().inNamespace(NS).withName("fencing-agent-workers").get() != null);
        // The Secret is in the informer by now (the agents' configs carry its keyring); let the reconcile that
        // created the DaemonSet and the one after it (the informer's copy) pass: wait until a whole second goes by
        // without the controller touching a Secret or a DaemonSet (each poll drains the log since the last one).
        // Other calls (status writes) may go on, so quiet here means quiet on those two resources.
        await().during(1, TimeUnit.SECONDS).atMost(15, TimeUnit.SECONDS).until(() -> recorder.checkedCalls(NS)
                .stream().noneMatch(c -> c.resource().equals("secrets") || c.resource().equals("daemonsets")));
        double before = reconciles();
        // The status interval is 500 ms here: the next 3 s hold several reconciles of the group.
        Thread.sleep(3000);
        List<ApiCall> calls = recorder.checkedCalls(NS);
        assertThat(reconciles() - before).as("reconciles in 3 s").isGreaterThanOrEqualTo(3);
        assertThat(calls).noneMatch(c -> c.resource().equals("secrets"));
        assertThat(calls).noneMatch(c -> c.resource().equals("daemonsets"));
    }

    /** JOSDK's count of finished reconciles, all resources. */
    private double reconciles() {
        return registry.getMeters().stream().filter(m -> m.getId().getName().startsWith("operator.sdk.reconciliations")
                && m.getId().getName().endsWith("success") && m instanceof io.micrometer.core.instrument.Counter)
                .mapToDouble(m -> ((io.micrometer.core.instrument.Counter) m).count()).sum();
    }

    @Test
    void aHelloWithoutATokenIsUnauthenticated() throws Exception {
        assertThat(refusal(hello("workers-1", null)).getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    }

    @Test
    void anExpiredOrUnknownTokenIsUnauthenticated() throws Exception {
        Pod pod = pods.agentPod("workers-1");
        String expired = pods.issue(new TestAgentPods.Claims(NS, pod.getMetadata().getName(),
                pod.getMetadata().getUid(), "workers-1", Instant.now().minusSeconds(5)));
        assertThat(refusal(hello("workers-1", expired)).getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        Status unknown = refusal(hello("workers-1", "eyJhbGciOiJub25lIn0.e30.forged"));
        assertThat(unknown.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(unknown.getDescription()).contains("rejected by TokenReview");
        // Counted for the on-call engineer, by code.
        assertThat(registry.get("fencing_controller_agent_calls_refused_total").tag("code", "UNAUTHENTICATED")
                .functionCounter().count()).isEqualTo(2);
        assertThat(registry.get("fencing_controller_agent_calls_refused_total").tag("code", "PERMISSION_DENIED")
                .functionCounter().count()).isZero();
    }

    @Test
    void anotherNodesAgentTokenCannotSayHelloAsThisNode() throws Exception {
        Status status = refusal(hello("workers-1", pods.token("workers-2")));
        assertThat(status.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(status.getDescription()).contains("node workers-2, not on workers-1");
    }

    @Test
    void aPodOnAnotherNodeIsRefusedEvenWithoutANodeClaim() throws Exception {
        Pod pod = pods.agentPod("workers-2");
        String noNodeClaim = pods.issue(new TestAgentPods.Claims(NS, pod.getMetadata().getName(),
                pod.getMetadata().getUid(), "", Instant.now().plusSeconds(600)));
        Status status = refusal(hello("workers-1", noNodeClaim));
        assertThat(status.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(status.getDescription()).contains("runs on node workers-2, not on workers-1");
    }

    /** One pod's token (a node's root can read its agent's) holds at most 16 streams on a replica. */
    @Test
    void onePodHoldsAtMostSixteenStreamsAndAnEndedOneFreesItsPlace() throws Exception {
        String token = pods.token("workers-1");
        List<TestAgent> held = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            TestAgent a = hello("workers-1", token);
            assertThat(a.next().hasFull()).as("stream %d", i).isTrue();
            held.add(a);
        }
        Status refused = refusal(hello("workers-1", token));
        assertThat(refused.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(refused.getDescription()).contains("already holds 16 agent streams");
        assertThat(hello("workers-2", pods.token("workers-2")).next().hasFull()).as("another pod").isTrue();

        held.get(0).close();
        await().ignoreExceptions().atMost(15, TimeUnit.SECONDS).until(() -> hello("workers-1", token).next()
                .hasFull());
    }

    @Test
    void aPodThatIsNotTheGroupsAgentIsRefusedOnItsOwnNode() throws Exception {
        Pod stranger = client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata()
                .withName("debug-shell").withNamespace(NS).endMetadata()
                .withNewSpec().withNodeName("workers-1").endSpec().build()).create();
        String token = pods.issue(new TestAgentPods.Claims(NS, "debug-shell", stranger.getMetadata().getUid(),
                "workers-1", Instant.now().plusSeconds(600)));
        Status status = refusal(hello("workers-1", token));
        assertThat(status.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(status.getDescription()).contains("not a pod of DaemonSet fencing-agent-workers");
    }

    @Test
    void aPodInAnotherNamespaceIsRefused() throws Exception {
        // Any pod can get a token for the agents' audience: refused by the interceptor, before a stream exists
        // (each costs the replica one of --max-agent-streams, for up to the hello timeout).
        String token = pods.issue(new TestAgentPods.Claims("default", "fencing-agent-workers-workers-1", "uid-x",
                "workers-1", Instant.now().plusSeconds(600)));
        Status status = refusal(hello("workers-1", token));
        assertThat(status.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(status.getDescription()).isEqualTo("ServiceAccount default/fencing-agent is not the agents' ("
                + NS + "/*)");
    }

    @Test
    void aRenewedServingCertificateIsUsedLiveAndConnectedAgentsStay() throws Exception {
        TestAgent before = hello("workers-1", pods.token("workers-1"));
        assertThat(before.next().hasFull()).isTrue();
        BigInteger oldSerial = servedSerial();

        Path[] renewed = pki.issue(dir, "renewed", SERVER_NAME);
        // The kubelet swaps a Secret volume's files atomically; so do we, key first then the chain.
        Files.move(renewed[1], key, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.move(renewed[0], cert, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        await().atMost(10, TimeUnit.SECONDS).until(() -> !servedSerial().equals(oldSerial));

        TestAgent after = hello("workers-2", pods.token("workers-2"));
        assertThat(after.next().hasFull()).isTrue();
        before.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(true)).build());
        await().atMost(10, TimeUnit.SECONDS).until(() -> manager.reports().latest("workers-1").isPresent());
        assertThat(before.closed).isNotDone();
    }

    @Test
    void theChartGrantsWhatTheControllerCallsWhileServingAgents() throws Exception {
        TestAgent a = hello("workers-1", pods.token("workers-1"));
        assertThat(a.next().hasFull()).isTrue();
        a.send(AgentMessage.newBuilder().setReport(AgentReport.newBuilder().setArmed(true).setQuorumHeld(true)
                .setConfirmed(2).setExpected(2).setQuorumSize(2)).build());
        await().atMost(20, TimeUnit.SECONDS).until(() -> client.nodes().withName("workers-1").get().getMetadata()
                .getLabels().containsKey(dev.fencing.nodemanager.model.NodeLabels.FENCING_ENABLED));
        manager.close();
        List<String> calls = recorder.assertChartAllowsEveryCall(NS);
        assertThat(calls).contains("create authentication.k8s.io/tokenreviews (cluster)",
                "get core/pods in " + NS, "get apps/daemonsets in " + NS, "create apps/daemonsets in " + NS,
                "create core/secrets in " + NS, "watch core/secrets in " + NS, "create coordination.k8s.io/leases in "
                        + NS, "patch core/nodes (cluster)", "watch deckhouse.io/nodegroups (cluster)",
                // the NodeGroup CRD's schema, read at start (--nodegroup-status=auto); only that CRD is allowed
                "get apiextensions.k8s.io/customresourcedefinitions (cluster)");
        assertThat(calls).anyMatch(c -> c.startsWith("create core/events"))
                .anyMatch(c -> c.contains("deckhouse.io/nodegroups/status"));
    }

    @Test
    void aRuleThatNamesItsObjectsAllowsNoOther() throws Exception {
        manager.close();
        recorder.controllerCalls();
        controllerClient.apiextensions().v1().customResourceDefinitions().withName("nodefencings.fencing.deckhouse.io")
                .get();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> recorder.assertChartAllowsEveryCall(NS))
                .hasMessageContaining("get apiextensions.k8s.io/customresourcedefinitions (cluster)");
        controllerClient.apiextensions().v1().customResourceDefinitions().withName("nodegroups.deckhouse.io").get();
        assertThat(recorder.assertChartAllowsEveryCall(NS))
                .containsExactly("get apiextensions.k8s.io/customresourcedefinitions (cluster)");
    }

    @Test
    void aCallTheChartDoesNotGrantIsNamed() throws Exception {
        manager.close();
        recorder.controllerCalls();
        controllerClient.services().inNamespace(NS).withName("anything").get();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> recorder.assertChartAllowsEveryCall(NS))
                .hasMessageContaining("get core/services in " + NS);
    }

    // The serial number of the certificate a fresh TLS handshake with the controller presents.
    private BigInteger servedSerial() throws Exception {
        java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(ca)) {
            trust.setCertificateEntry("ca", java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, tmf.getTrustManagers(), null);
        try (SSLSocket s = (SSLSocket) tls.getSocketFactory().createSocket("127.0.0.1", manager.grpcPort())) {
            javax.net.ssl.SSLParameters p = s.getSSLParameters();
            p.setApplicationProtocols(new String[] {"h2"});
            s.setSSLParameters(p);
            s.setSoTimeout(5000);
            s.startHandshake();
            return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
        }
    }
}
