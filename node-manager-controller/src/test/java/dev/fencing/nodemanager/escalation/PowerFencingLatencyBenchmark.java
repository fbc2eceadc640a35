package dev.fencing.nodemanager.escalation;

import dev.fencing.api.fencing.v1alpha1.ExecutionPolicy;
import dev.fencing.api.fencing.v1alpha1.FenceMethod;
import dev.fencing.api.fencing.v1alpha1.FenceParameter;
import dev.fencing.api.fencing.v1alpha1.FenceStage;
import dev.fencing.api.fencing.v1alpha1.NodeFencing;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfig;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfigSpec;
import dev.fencing.api.fencing.v1alpha1.SecretKeyRef;
import dev.fencing.api.fencing.v1alpha1.SecretParameter;
import dev.fencing.kubetest.IpmiSimulator;
import dev.fencing.nodemanager.reconciler.ClusterWriter;
import dev.fencing.nodemanager.status.NodeFacts;
import dev.fencing.nodemanager.testing.CrudMockExtension;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;

/**
 * Prints how long the escalation takes from the moment a node is due (still unheard escalationGrace after
 * safe-to-assume-fenced) to the simulated node's power-off and to its out-of-service taint, with the real
 * {@code fence_ipmilan} (lanplus) against OpenIPMI's {@code ipmi_sim} on loopback, the controller on the CRUD mock.
 * The whole time from a frozen agent adds the group's safe-to-assume-fenced delay and escalationGrace.
 *
 * <p>Run: {@code java -cp <test classpath> dev.fencing.nodemanager.escalation.PowerFencingLatencyBenchmark [runs]}.
 */
public final class PowerFencingLatencyBenchmark {

    private PowerFencingLatencyBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        for (int i = 1; i <= runs; i++) {
            run(i);
        }
    }

    private static void run(int i) throws Exception {
        KubernetesMockServer api = CrudMockExtension.startServer();
        Path dir = Files.createTempDirectory("power-fencing-bench");
        Process node = new ProcessBuilder("sleep", "600").start();
        try (KubernetesClient client = api.createClient();
             IpmiSimulator bmc = IpmiSimulator.start(dir, "bench-pw", "kill -9 " + node.pid())) {
            for (String crd : List.of(NodeFencingConfig.CRD_NAME, NodeFencing.CRD_NAME)) {
                try (InputStream in = PowerFencingLatencyBenchmark.class.getResourceAsStream(
                        "/META-INF/fabric8/" + crd + "-v1.yml")) {
                    client.apiextensions().v1().customResourceDefinitions().resource(client
                            .getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class)).create();
                }
            }
            client.secrets().inNamespace("ns").resource(new SecretBuilder().withNewMetadata().withName("bmc")
                    .withNamespace("ns").endMetadata().withStringData(Map.of("password", "bench-pw")).build())
                    .create();
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a").endMetadata().build())
                    .create();
            NodeFencingConfig config = new NodeFencingConfig();
            config.setMetadata(new ObjectMetaBuilder().withName("bench").build());
            config.setSpec(new NodeFencingConfigSpec(null, List.of("node-a"), List.of(new FenceStage("bmc",
                    ExecutionPolicy.One, null, "30s", List.of(new FenceMethod("ipmi", "fence_ipmilan", List.of(
                            new FenceParameter("ip", "127.0.0.1"), new FenceParameter("ipport",
                                    String.valueOf(bmc.port())), new FenceParameter("username", IpmiSimulator.USER),
                            new FenceParameter("lanplus", "1"), new FenceParameter("cipher", "3")),
                            List.of(new SecretParameter("password", new SecretKeyRef("ns", "bmc", "password"))))))),
                    null, "30s", null));
            client.resources(NodeFencingConfig.class).resource(config).create();
            InstantSource clock = InstantSource.system();
            Instant due = Instant.now();
            NodeFencingController.Sources sources = new NodeFencingController.Sources() {
                @Override
                public List<EscalationTrigger.Candidate> candidates() {
                    Node n = client.nodes().withName("node-a").get();
                    return List.of(new EscalationTrigger.Candidate(n, "workers", due.minusSeconds(30), "ok", false, false,
                            NodeFacts.of(n, null)));
                }

                @Override
                public boolean returned(String name) {
                    return false;
                }
            };
            long start = System.nanoTime();
            long offNanos = -1;
            long taintNanos = -1;
            try (NodeFencingController c = new NodeFencingController(client, new FenceStageExecutor(
                    new ProcessFenceAgentRunner(Path.of("/usr/sbin")), new KubernetesSecretSource(client), clock,
                    "bench"), new ClusterWriter(client, clock), sources, new KdumpSightings(),
                    FencingAdmission.UNLIMITED, () -> true, clock, "bench", Duration.ofSeconds(40),
                    Duration.ofMillis(100), 1).start()) {
                long deadline = start + Duration.ofSeconds(120).toNanos();
                while (System.nanoTime() < deadline && taintNanos < 0) {
                    if (offNanos < 0 && !node.isAlive()) {
                        offNanos = System.nanoTime() - start;
                    }
                    if (NodeFacts.of(client.nodes().withName("node-a").get(), null).outOfServiceByUs()) {
                        taintNanos = System.nanoTime() - start;
                    }
                    Thread.sleep(20);
                }
            }
            System.out.printf("run %d: due -> node processes killed by the BMC's power-off %d ms, -> out-of-service "
                    + "taint %d ms (fence_ipmilan lanplus status+off+status against ipmi_sim; tick 100 ms)%n", i,
                    offNanos / 1_000_000, taintNanos / 1_000_000);
        } finally {
            node.destroyForcibly();
            api.destroy();
        }
    }
}
