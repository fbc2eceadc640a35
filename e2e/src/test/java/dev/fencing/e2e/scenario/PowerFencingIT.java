package dev.fencing.e2e.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.fencing.api.fencing.v1alpha1.AgentInvocation;
import dev.fencing.api.fencing.v1alpha1.MethodRun;
import dev.fencing.api.fencing.v1alpha1.NodeFencing;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfig;
import dev.fencing.api.fencing.v1alpha1.NodeFencingPhase;
import dev.fencing.api.fencing.v1alpha1.NodeFencingStatus;
import dev.fencing.api.fencing.v1alpha1.StageRun;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentNode;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.controlplane.ControlPlane;
import dev.fencing.e2e.controlplane.ControlPlaneLab;
import dev.fencing.e2e.controlplane.ControllerOptions;
import dev.fencing.e2e.controlplane.KubeNodeWatch;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.kubetest.IpmiSimulator;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 15 item 2: power fencing end to end on the real control plane. Five lab nodes, each with its own BMC
 * (OpenIPMI's {@code ipmi_sim} on the control-plane namespace's loopback, where the controller runs) whose power-off
 * SIGKILLs that node's agent, kubelet stand-in and emulated watchdog; the controller runs with {@code --power-fencing}
 * and the real {@code fence_ipmilan}. Two nodes hang after they armed: agent, kubelet and watchdog emulator all
 * SIGSTOPped, so nothing resets them. The majority stops hearing them, Kubernetes sees them NotReady, they are recorded
 * fenced, and {@code escalationGrace} later the leader powers them off through IPMI and taints them out of service.
 * node-4's BMC answers its first stage; node-5's first stage uses stale credentials (wrong password), fails at its
 * first {@code status}, and the second stage fences it. Asked to recover, the controller powers both on, the test
 * boots them, and the records close with {@code Recovered}/{@code NodeReturned} while the taints go. Nobody else is
 * powered, tainted, recorded or reset.
 */
class PowerFencingIT {

    private static final List<String> NODES = List.of("node-1", "node-2", "node-3", "node-4", "node-5");
    private static final String GROUP = "workers";
    private static final String FIRST_STAGE_OK = "node-4";
    private static final String FIRST_STAGE_FAILS = "node-5";
    private static final Set<String> VICTIMS = Set.of(FIRST_STAGE_OK, FIRST_STAGE_FAILS);
    private static final Set<String> HEALTHY = Set.of("node-1", "node-2", "node-3");
    /** Each node's BMC port on the control-plane namespace's loopback (nothing else binds there). */
    private static final int FIRST_BMC_PORT = 16230;
    private static final String BMC_PORT_ANNOTATION = "fencing.deckhouse.io/bmc-port";
    private static final String PASSWORD = "e2e-bmc-secret";
    private static final String SECRET = "bmc-credentials";
    private static final Duration ARM = Duration.ofSeconds(120);
    /** Freeze -> Unknown (8 s) -> safe-to-assume-fenced -> escalationGrace -> IPMI, on a loaded 2-core machine. */
    private static final Duration FENCE = Duration.ofSeconds(90);
    private static final Duration RECOVER = Duration.ofSeconds(90);
    private static final Duration POLL = Duration.ofMillis(100);

    private ControlPlaneLab controlPlaneLab;
    private KubeNodeWatch kube;
    private final Map<String, IpmiSimulator> bmcs = new LinkedHashMap<>();

    @AfterEach
    void tearDown() {
        if (kube != null) {
            kube.close();
        }
        bmcs.values().forEach(IpmiSimulator::close);
        if (controlPlaneLab != null) {
            controlPlaneLab.close();
        }
    }

    @Test
    void hungNodesArePowerFencedThroughIpmiTaintedAndRecoveredAndAFailingBmcMovesToTheNextStage() throws Exception {
        ProjectLayout layout = ProjectLayout.fromWorkingDirectory();
        // the leader looks every 500 ms (default 2 s); at most 2 taints at once so both hung nodes are fenced together
        controlPlaneLab = ControlPlaneLab.start(NODES, Set.of(), GROUP, AgentSettings.fastFence(), layout,
                "scenarios", ControllerOptions.withPowerFencing("--power-fencing-interval", "500ms",
                        "--max-out-of-service", "2"));
        ControlPlane plane = controlPlaneLab.controlPlane();
        AgentCluster cluster = controlPlaneLab.agents();
        KubernetesClient admin = plane.kube().adminClient();
        ScenarioReport report = new ScenarioReport("5 nodes with IPMI BMCs, node-4 and node-5 hang (agent, kubelet "
                + "and watchdog SIGSTOPped); node-5's first stage has a wrong password");

        startBmcs(plane, cluster);
        configurePowerFencing(admin);
        long armedMillis = cluster.awaitAllArmed(ARM);
        System.out.printf("PowerFencingIT: 5 agents armed after %d ms (logs %s)%n", armedMillis,
                controlPlaneLab.logDir());
        kube = KubeNodeWatch.start(plane);

        long frozenAt = System.nanoTime();
        VICTIMS.forEach(v -> cluster.node(v).freeze());

        Map<String, Long> powerOffMillis = new LinkedHashMap<>();
        awaitAll(VICTIMS, v -> "0".equals(power(v)), FENCE, "powered off through fence_ipmilan", frozenAt,
                powerOffMillis);
        Awaitility.await("the power-off killed the hung nodes' processes").atMost(Duration.ofSeconds(10))
                .pollInterval(POLL).until(() -> VICTIMS.stream().noneMatch(v -> cluster.node(v).anyProcessAlive()));
        for (String victim : VICTIMS.stream().sorted().toList()) {
            KubeNodeWatch.Snapshot unknown = kube.first(frozenAt, look -> !look.isReady(victim)).orElseThrow();
            KubeNodeWatch.Snapshot fenced = kube.await(victim + " in status.fencedNodes", frozenAt,
                    look -> look.fenced().contains(victim), FENCE);
            KubeNodeWatch.Snapshot tainted = kube.await(victim + " tainted out of service", frozenAt,
                    look -> look.tainted(victim, ControlPlane.OUT_OF_SERVICE_TAINT), FENCE);
            report.add("frozen -> Node not Ready", victim, millis(unknown.nanos() - frozenAt), "");
            report.add("frozen -> in status.fencedNodes", victim, millis(fenced.nanos() - frozenAt), "");
            report.add("frozen -> BMC power off (fence_ipmilan)", victim, powerOffMillis.get(victim), "");
            report.add("frozen -> out-of-service taint", victim, millis(tainted.nanos() - frozenAt), "");
            System.out.printf("PowerFencingIT: node=%s frozen_to_power_off_ms=%d frozen_to_taint_ms=%d%n", victim,
                    powerOffMillis.get(victim), millis(tainted.nanos() - frozenAt));
        }

        NodeFencing okRecord = onlyRecordOf(admin, FIRST_STAGE_OK);
        assertThat(okRecord.getStatus().phase()).isEqualTo(NodeFencingPhase.Fenced);
        assertThat(okRecord.getSpec().nodeGroup()).isEqualTo(GROUP);
        assertThat(okRecord.getSpec().config()).isEqualTo("b-workers-ipmi");
        assertThat(okRecord.getStatus().stages()).extracting(StageRun::name, StageRun::result, StageRun::attempts)
                .containsExactly(tuple("bmc", StageRun.SUCCEEDED, 1));
        assertPowerRun(okRecord.getStatus().stages().get(0), "off", 2);
        assertCondition(okRecord.getStatus(), "Fenced", "True", "StageSucceeded");
        assertTaintedAfterPowerOff(okRecord.getStatus());

        NodeFencing movedOn = onlyRecordOf(admin, FIRST_STAGE_FAILS);
        assertThat(movedOn.getStatus().phase()).isEqualTo(NodeFencingPhase.Fenced);
        assertThat(movedOn.getSpec().config()).isEqualTo("a-stale-credentials");
        assertThat(movedOn.getStatus().stages()).extracting(StageRun::name, StageRun::result, StageRun::attempts)
                .containsExactly(tuple("stale-credentials", StageRun.FAILED, 1),
                        tuple("bmc", StageRun.SUCCEEDED, 1));
        // the wrong password fails the first status: the action is never tried
        List<AgentInvocation> stale = movedOn.getStatus().stages().get(0).methods().get(0).invocations();
        assertThat(stale).extracting(AgentInvocation::action).containsExactly("status");
        assertThat(stale.get(0).exitCode()).isNotIn(0, 2);
        assertThat(String.valueOf(stale.get(0).output())).doesNotContain(PASSWORD);
        assertPowerRun(movedOn.getStatus().stages().get(1), "off", 2);
        assertCondition(movedOn.getStatus(), "Fenced", "True", "StageSucceeded");
        assertTaintedAfterPowerOff(movedOn.getStatus());
        assertThat(Instant.parse(movedOn.getStatus().stages().get(1).startedAt()))
                .as("the second stage started after the first failed")
                .isAfterOrEqualTo(Instant.parse(movedOn.getStatus().stages().get(0).finishedAt()));
        assertThat(bmcs.get(FIRST_STAGE_FAILS).events()).as("the failed stage did not power it").containsExactly(
                "power 0");

        // recovery: the operator asks, the controller powers the nodes on, they boot and come back
        long recoverAt = System.nanoTime();
        for (NodeFencing record : List.of(okRecord, movedOn)) {
            admin.resources(NodeFencing.class).withName(record.getMetadata().getName()).patch(
                    PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"annotations\":{\""
                            + NodeFencing.RECOVER_ANNOTATION + "\":\"e2e\"}}}");
        }
        Map<String, Long> powerOnMillis = new LinkedHashMap<>();
        awaitAll(VICTIMS, v -> "1".equals(power(v)), RECOVER, "powered on by the recovery stage", recoverAt,
                powerOnMillis);
        VICTIMS.stream().sorted().forEach(v -> cluster.node(v).powerOn());
        for (String victim : VICTIMS.stream().sorted().toList()) {
            KubeNodeWatch.Snapshot back = kube.await(victim + " Ready without the out-of-service taint", recoverAt,
                    look -> look.isReady(victim) && !look.tainted(victim, ControlPlane.OUT_OF_SERVICE_TAINT)
                            && !look.fenced().contains(victim), RECOVER);
            Awaitility.await(victim + "'s record closed: the node returned").atMost(RECOVER).pollInterval(POLL)
                    .until(() -> isRecoveredByReturn(onlyRecordOf(admin, victim)));
            NodeFencing closed = onlyRecordOf(admin, victim);
            assertThat(closed.getStatus().recovery().result()).isEqualTo(StageRun.SUCCEEDED);
            assertPowerRun(closed.getStatus().recovery(), "on", 0);
            assertThat(closed.getStatus().recoveredAt()).isNotNull();
            cluster.node(victim).awaitStatus("re-armed with quorum", s -> s.getArmed() && s.getQuorumHeld(), ARM);
            report.add("recover annotation -> BMC power on", victim, powerOnMillis.get(victim), "");
            report.add("recover annotation -> Ready, untainted", victim, millis(back.nanos() - recoverAt), "");
            assertThat(bmcs.get(victim).events()).containsExactly("power 0", "power 1");
        }

        // nobody else was touched: no power event, record, taint, fenced entry or reset
        for (String node : HEALTHY) {
            assertThat(bmcs.get(node).events()).as("%s's BMC", node).isEmpty();
            assertThat(recordsOf(admin, node)).as("NodeFencing records of %s", node).isEmpty();
            assertThat(cluster.node(node).agent().isAlive()).as("%s's agent", node).isTrue();
        }
        for (KubeNodeWatch.Snapshot look : kube.since(frozenAt)) {
            for (String node : HEALTHY) {
                assertThat(look.fenced()).as("fenced nodes").doesNotContain(node);
                assertThat(look.tainted(node, ControlPlane.OUT_OF_SERVICE_TAINT)).as(node + " out of service")
                        .isFalse();
            }
        }
        assertThat(cluster.resetsSince(frozenAt).values()).as("watchdog resets (the hung nodes' did not fire)")
                .allMatch(List::isEmpty);
        report.note("other nodes powered, tainted, recorded or reset", "-", "0").print();
    }

    /** One ipmi_sim per node on the control plane's loopback; its power-off kills that node's processes. */
    private void startBmcs(ControlPlane plane, AgentCluster cluster) throws IOException {
        int port = FIRST_BMC_PORT;
        for (AgentNode node : cluster.nodes()) {
            Path dir = controlPlaneLab.logDir().resolve("bmc-" + node.name());
            bmcs.put(node.name(), IpmiSimulator.startInNetworkNamespace(plane.namespace(), port, dir, PASSWORD,
                    node.powerOffCommand()));
            plane.annotateNode(node.name(), BMC_PORT_ANNOTATION, String.valueOf(port));
            port++;
        }
    }

    /**
     * The BMC password in a Secret of the controller's namespace (plus a stale one), two NodeFencingConfigs (node-5's
     * first, by name: a stage with the stale password, then the right one; every other node of the group: one
     * stage), and room in the group's storm limits for two fencings at once.
     */
    private static void configurePowerFencing(KubernetesClient admin) {
        admin.secrets().inNamespace(ControlPlane.CONTROLLER_NAMESPACE).resource(new SecretBuilder().withNewMetadata()
                .withName(SECRET).endMetadata().addToStringData("password", PASSWORD)
                .addToStringData("stale-password", "wrong-" + PASSWORD).build()).create();
        String ipmi = """
                        - name: ipmi
                          agent: fence_ipmilan
                          parameters:
                            - {name: ip, value: 127.0.0.1}
                            - {name: ipport, value: "$(NODE_ANNOTATION:%s)"}
                            - {name: username, value: %s}
                            - {name: lanplus, value: "1"}
                            - {name: cipher, value: "3"}
                          secretParameters:
                            - parameter: password
                              secretRef: {namespace: %s, name: %s, key: %%s}
                """.formatted(BMC_PORT_ANNOTATION, IpmiSimulator.USER, ControlPlane.CONTROLLER_NAMESPACE, SECRET);
        String recovery = """
                  recovery:
                    name: power-on
                    timeout: 20s
                    methods:
                """ + ipmi.formatted("password").indent(-2);
        String stale = """
                apiVersion: fencing.deckhouse.io/v1alpha1
                kind: NodeFencingConfig
                metadata: {name: a-stale-credentials}
                spec:
                  nodeNames: [%s]
                  escalationGrace: 2s
                  stages:
                    - name: stale-credentials
                      timeout: 20s
                      methods:
                %s    - name: bmc
                      timeout: 20s
                      methods:
                %s""".formatted(FIRST_STAGE_FAILS, ipmi.formatted("stale-password"), ipmi.formatted("password"))
                + recovery;
        String workers = """
                apiVersion: fencing.deckhouse.io/v1alpha1
                kind: NodeFencingConfig
                metadata: {name: b-workers-ipmi}
                spec:
                  nodeSelector: {%s: %s}
                  escalationGrace: 2s
                  stages:
                    - name: bmc
                      timeout: 20s
                      methods:
                %s""".formatted(ControlPlane.GROUP_LABEL, GROUP, ipmi.formatted("password")) + recovery;
        for (String yaml : List.of(stale, workers)) {
            admin.resource(admin.getKubernetesSerialization().unmarshal(yaml, NodeFencingConfig.class)).create();
        }
        admin.resources(NodeGroup.class).withName(GROUP).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"spec\":{\"fencing\":{\"storm\":{\"maxConcurrent\":2}}}}");
    }

    private String power(String node) {
        try {
            return bmcs.get(node).power();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until {@code condition} held for every node, recording when it first did (ms after {@code since}). */
    private static void awaitAll(Set<String> nodes, Predicate<String> condition, Duration timeout,
                                 String what, long since, Map<String, Long> firstMillis) {
        Awaitility.await("every one of " + nodes + " " + what).atMost(timeout).pollInterval(POLL).until(() -> {
            for (String node : nodes) {
                if (!firstMillis.containsKey(node) && condition.test(node)) {
                    firstMillis.put(node, millis(System.nanoTime() - since));
                }
            }
            return firstMillis.keySet().containsAll(nodes);
        });
    }

    private static List<NodeFencing> recordsOf(KubernetesClient admin, String node) {
        return admin.resources(NodeFencing.class).withLabel(NodeFencing.NODE_LABEL, NodeFencing.nodeLabelValue(node)).list().getItems();
    }

    private static NodeFencing onlyRecordOf(KubernetesClient admin, String node) {
        List<NodeFencing> records = recordsOf(admin, node);
        assertThat(records).as("NodeFencing records of %s", node).hasSize(1);
        return records.get(0);
    }

    private static boolean isRecoveredByReturn(NodeFencing record) {
        NodeFencingStatus s = record.getStatus();
        return s != null && s.phase() == NodeFencingPhase.Recovered && condition(s, "Recovered")
                .filter(c -> "True".equals(c.getStatus()) && "NodeReturned".equals(c.getReason())).isPresent();
    }

    private static Optional<Condition> condition(NodeFencingStatus status, String type) {
        return status.conditions() == null ? Optional.empty()
                : status.conditions().stream().filter(c -> type.equals(c.getType())).findFirst();
    }

    /** The taint follows the confirmed power-off: the record's taintedAt is not before its fencedAt. */
    private static void assertTaintedAfterPowerOff(NodeFencingStatus status) {
        assertThat(status.fencedAt()).isNotNull();
        assertThat(status.taintedAt()).isNotNull();
        assertThat(Instant.parse(status.taintedAt())).isAfterOrEqualTo(Instant.parse(status.fencedAt()));
    }

    private static void assertCondition(NodeFencingStatus status, String type, String value, String reason) {
        assertThat(condition(status, type)).as("condition %s", type).hasValueSatisfying(c -> {
            assertThat(c.getStatus()).isEqualTo(value);
            assertThat(c.getReason()).isEqualTo(reason);
        });
    }

    /** One fence_ipmilan method that ran status, {@code action}, status, the last confirming ({@code exit}). */
    private static void assertPowerRun(StageRun stage, String action, int confirmingExit) {
        assertThat(stage.result()).isEqualTo(StageRun.SUCCEEDED);
        assertThat(stage.methods()).hasSize(1);
        MethodRun method = stage.methods().get(0);
        assertThat(method.agent()).isEqualTo("fence_ipmilan");
        assertThat(method.succeeded()).isTrue();
        assertThat(method.invocations()).extracting(AgentInvocation::action)
                .containsExactly("status", action, "status");
        assertThat(method.invocations().get(1).exitCode()).isZero();
        assertThat(method.invocations().get(2).exitCode()).isEqualTo(confirmingExit);
    }

    private static long millis(long nanos) {
        return nanos / 1_000_000;
    }
}
