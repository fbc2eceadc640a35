package dev.fencing.nodemanager.escalation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.fencing.v1alpha1.ExecutionPolicy;
import dev.fencing.api.fencing.v1alpha1.FenceMethod;
import dev.fencing.api.fencing.v1alpha1.FenceParameter;
import dev.fencing.api.fencing.v1alpha1.FenceStage;
import dev.fencing.api.fencing.v1alpha1.KdumpSpec;
import dev.fencing.api.fencing.v1alpha1.NodeFencing;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfig;
import dev.fencing.api.fencing.v1alpha1.NodeFencingConfigSpec;
import dev.fencing.api.fencing.v1alpha1.NodeFencingPhase;
import dev.fencing.api.fencing.v1alpha1.NodeFencingSpec;
import dev.fencing.api.fencing.v1alpha1.NodeFencingStatus;
import dev.fencing.api.fencing.v1alpha1.SecretKeyRef;
import dev.fencing.api.fencing.v1alpha1.SecretParameter;
import dev.fencing.api.fencing.v1alpha1.StageRun;
import dev.fencing.nodemanager.reconciler.ClusterWriter;
import dev.fencing.nodemanager.status.NodeFacts;
import dev.fencing.nodemanager.storm.StormGuard;
import dev.fencing.nodemanager.tiebreak.TieBreakArbiter;
import dev.fencing.nodemanager.testing.CrudMockClient;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The escalation controller on the fabric8 CRUD mock with fake fence agents (real processes speaking the stdin
 * protocol): records, stage order, mustSucceed, the taint, recovery on request, and the hand-over of a stage a dead
 * replica left running.
 */
@CrudMockClient
class NodeFencingControllerTest {

    private static final SecretKeyRef PASSWORD = new SecretKeyRef("ns", "bmc", "password");
    private static final String PLUG_ANNOTATION = "fencing.deckhouse.io/plug";

    KubernetesClient client;

    @TempDir
    Path dir;
    private FakeFenceAgents agents;
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-23T10:00:00Z"));
    private final AtomicReference<Instant> fencedAt = new AtomicReference<>(Instant.parse("2026-11-23T09:59:00Z"));
    private final AtomicReference<String> watchdog = new AtomicReference<>("ok");
    private final AtomicBoolean returned = new AtomicBoolean();
    private final AtomicBoolean onPurpose = new AtomicBoolean();
    private dev.fencing.api.fencing.v1alpha1.FencePowerAction powerAction;
    private final AtomicBoolean leading = new AtomicBoolean(true);
    private final List<NodeFencingController> controllers = new ArrayList<>();
    private final KdumpSightings kdump = new KdumpSightings();
    private final AtomicReference<String> stormLimit = new AtomicReference<>();
    private final List<String> finished = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final List<String> inProgress = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final FencingAdmission admission = new FencingAdmission() {
        @Override
        public StormGuard.Admission admit(String group, String node, Instant at) {
            String limit = stormLimit.get();
            return new StormGuard.Admission(limit == null, limit == null ? "admitted" : limit);
        }

        @Override
        public void finished(String group, String node, Instant at) {
            finished.add(group + "/" + node);
        }

        @Override
        public void inProgress(String group, String node) {
            inProgress.add(group + "/" + node);
        }
    };

    @BeforeEach
    void setUp() throws Exception {
        for (String crd : List.of(NodeFencingConfig.CRD_NAME, NodeFencing.CRD_NAME)) {
            try (InputStream in = getClass().getResourceAsStream("/META-INF/fabric8/" + crd + "-v1.yml")) {
                client.apiextensions().v1().customResourceDefinitions().resource(client.getKubernetesSerialization()
                        .unmarshal(in, CustomResourceDefinition.class)).create();
            }
        }
        agents = new FakeFenceAgents(dir).working("fence_good", "s3cret").working("fence_other", "other-pw")
                .hanging("fence_hang");
        client.secrets().inNamespace("ns").resource(new SecretBuilder().withNewMetadata().withName("bmc")
                .withNamespace("ns").endMetadata().withStringData(Map.of("password", "s3cret")).build()).create();
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a")
                .withLabels(Map.of("node.deckhouse.io/group", "worker"))
                .withAnnotations(Map.of(PLUG_ANNOTATION, "plug-a")).endMetadata().withNewStatus().addNewCondition()
                .withType("Ready").withStatus("False").endCondition().addNewAddress().withType("InternalIP")
                .withAddress("198.18.0.3").endAddress().endStatus().build()).create();
    }

    @AfterEach
    void tearDown() {
        controllers.forEach(NodeFencingController::close);
    }

    private static FenceStage stage(String name, String agent, boolean mustSucceed) {
        return new FenceStage(name, ExecutionPolicy.One, mustSucceed, "10s", List.of(new FenceMethod("m", agent,
                List.of(new FenceParameter("plug", "$(NODE_ANNOTATION:" + PLUG_ANNOTATION + ")")),
                List.of(new SecretParameter("password", PASSWORD)))));
    }

    private void config(FenceStage... stages) {
        config(null, stages);
    }

    private void config(KdumpSpec kdump, FenceStage... stages) {
        NodeFencingConfig config = new NodeFencingConfig();
        config.setMetadata(new ObjectMetaBuilder().withName("worker").build());
        config.setSpec(new NodeFencingConfigSpec(Map.of("node.deckhouse.io/group", "worker"), null,
                List.of(stages), stage("power-on", "fence_good", false), "30s", kdump, powerAction));
        client.resources(NodeFencingConfig.class).resource(config).create();
    }

    private NodeFencingController controller(String identity) {
        return controller(identity, new ProcessFenceAgentRunner(dir));
    }

    private NodeFencingController controller(String identity, FenceAgentRunner runner) {
        return controller(identity, runner, now::get, sources(() -> candidates(false), node -> returned.get()));
    }

    /** node-a as the caches see it: recorded fenced at {@link #fencedAt}, its agent reporting or not. */
    private List<EscalationTrigger.Candidate> candidates(boolean reporting) {
        Node n = client.nodes().withName("node-a").get();
        return List.of(new EscalationTrigger.Candidate(n, "worker", fencedAt.get(), watchdog.get(), onPurpose.get(),
                reporting, NodeFacts.of(n, null)));
    }

    private static NodeFencingController.Sources sources(java.util.function.Supplier<List<EscalationTrigger.Candidate>>
                                                                 candidates,
                                                         java.util.function.Predicate<String> returned) {
        return new NodeFencingController.Sources() {
            @Override
            public List<EscalationTrigger.Candidate> candidates() {
                return candidates.get();
            }

            @Override
            public boolean returned(String node) {
                return returned.test(node);
            }
        };
    }

    private NodeFencingController controller(String identity, FenceAgentRunner runner, InstantSource clock,
                                             NodeFencingController.Sources sources) {
        NodeFencingController c = new NodeFencingController(client, new FenceStageExecutor(
                runner, new KubernetesSecretSource(client), clock, identity),
                new ClusterWriter(client, clock), sources, kdump, admission, leading::get, clock, identity,
                Duration.ofSeconds(40),
                Duration.ofMillis(100), 2);
        controllers.add(c);
        return c;
    }

    /** A record node-a-1 in phase Fencing at {@code currentStage} with {@code run}, as a replica that died left it. */
    private void leftByADeadReplica(String currentStage, StageRun run) {
        NodeFencing left = new NodeFencing();
        left.setMetadata(new ObjectMetaBuilder().withName("node-a-1").withLabels(Map.of(NodeFencing.NODE_LABEL,
                "node-a")).build());
        left.setSpec(new NodeFencingSpec("node-a", "worker", "test", "worker"));
        left = client.resources(NodeFencing.class).resource(left).create();
        left.setStatus(new NodeFencingStatus(NodeFencingPhase.Fencing, currentStage, List.of(run), null,
                now.get().toString(), null, null, null, null, null, List.of()));
        client.resources(NodeFencing.class).resource(left).updateStatus();
    }

    private long agentRuns(String agent, String action) throws Exception {
        return agents.log(agent).lines().filter(l -> l.equals("action=" + action)).count();
    }

    private List<NodeFencing> records() {
        return client.resources(NodeFencing.class).list().getItems();
    }

    private NodeFencing record() {
        List<NodeFencing> all = records();
        assertThat(all).hasSize(1);
        return all.get(0);
    }

    private NodeFencingPhase phase() {
        List<NodeFencing> all = records();
        return all.isEmpty() || all.get(0).getStatus() == null ? null : all.get(0).getStatus().phase();
    }

    private boolean tainted() {
        return NodeFacts.of(client.nodes().withName("node-a").get(), null).outOfServiceByUs();
    }

    @Test
    void aNodeStillUnheardAfterTheGraceIsPoweredOffAndThenTainted() throws Exception {
        config(stage("bmc", "fence_good", false));
        controller("replica-1").start();

        await().atMost(20, TimeUnit.SECONDS).until(() -> record().getStatus().taintedAt() != null);
        NodeFencing r = record();
        assertThat(r.getSpec()).isEqualTo(new NodeFencingSpec("node-a", "worker", "still unheard 30s "
                + "(escalationGrace) after safe-to-assume-fenced at 2026-11-23T09:59:00Z", "worker"));
        assertThat(r.getMetadata().getLabels()).containsEntry(NodeFencing.NODE_LABEL, "node-a");
        NodeFencingStatus s = r.getStatus();
        assertThat(s.phase()).isEqualTo(NodeFencingPhase.Fenced);
        assertThat(s.fencedAt()).isNotNull();
        assertThat(s.stages()).singleElement().satisfies(run -> {
            assertThat(run.result()).isEqualTo(StageRun.SUCCEEDED);
            assertThat(run.runner()).isEqualTo("replica-1");
            assertThat(run.methods().get(0).invocations()).extracting(i -> i.action() + ":" + i.exitCode())
                    .containsExactly("status:0", "off:0", "status:2");
        });
        assertThat(s.conditions()).anySatisfy(c -> {
            assertThat(c.getType()).isEqualTo("Fenced");
            assertThat(c.getStatus()).isEqualTo("True");
        });
        assertThat(tainted()).isTrue();
        assertThat(agents.power("plug-a")).isEqualTo("off");
        assertThat(client.getKubernetesSerialization().asJson(r)).doesNotContain("s3cret");
    }

    @Test
    void anOpenRecordAPreviousLeaderStartedCountsAsAFencingInProgressForTheNextLeader() throws Exception {
        config(stage("bmc", "fence_good", false));
        controller("replica-1").tick();
        assertThat(records()).hasSize(1);
        inProgress.clear();

        // replica-1 is gone; replica-2 leads with a storm guard that admitted nothing itself
        controller("replica-2").tick();
        assertThat(inProgress).contains("worker/node-a");
    }

    @Test
    void aStoppingControllerKillsTheAgentItRunsAndReapsItBeforeCloseReturns() throws Exception {
        config(stage("bmc", "fence_hang", false));
        NodeFencingController c = controller("replica-1");
        c.tick();
        await().atMost(10, TimeUnit.SECONDS).until(() -> !runningAgents().isEmpty());

        c.close();
        assertThat(runningAgents()).as("no fence agent outlives the controller").isEmpty();
        // The killed run is not a failure of the stage: the record stays Running for the next leader.
        assertThat(record().getStatus().stages()).singleElement()
                .satisfies(r -> assertThat(r.result()).isEqualTo("Running"));
    }

    /** This JVM's live child processes that are the hanging agent ({@code exec sleep 600}). */
    private static List<ProcessHandle> runningAgents() {
        return ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
                .filter(p -> p.info().commandLine().orElse("").contains("sleep 600")).toList();
    }

    @Test
    void nothingHappensBeforeTheGraceOrOnAFollower() throws Exception {
        config(stage("bmc", "fence_good", false));
        fencedAt.set(now.get().minusSeconds(10));
        NodeFencingController c = controller("replica-1");
        c.tick();
        assertThat(records()).isEmpty();

        fencedAt.set(now.get().minusSeconds(60));
        leading.set(false);
        c.tick();
        assertThat(records()).isEmpty();
        assertThat(agents.power("plug-a")).isEqualTo("on");
    }

    @Test
    void aDumpingNodeIsTaintedAtOnceAndItsPowerStageWaitsUntilTheMessagesStop() throws Exception {
        config(new KdumpSpec(true, "10m"), stage("bmc", "fence_good", false));
        kdump.record(java.net.InetAddress.getByName("198.18.0.3"), now.get().minusSeconds(5));
        controller("replica-1").start();

        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Dumping && tainted());
        NodeFencingStatus s = record().getStatus();
        assertThat(s.kdumpStartedAt()).isEqualTo(now.get().minusSeconds(5).toString());
        assertThat(s.taintedAt()).isNotNull();
        await().during(1, TimeUnit.SECONDS).atMost(5, TimeUnit.SECONDS).until(() -> agents.log("fence_good")
                .isEmpty());

        // No message for 30 s: the dump is over, the power stage runs.
        now.set(now.get().plusSeconds(30));
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced);
        assertThat(agents.power("plug-a")).isEqualTo("off");
    }

    /**
     * Escalated for a watchdog that is not working, the node is not recorded fenced: a fence_kdump message (which
     * anything on the node's address can send) holds its power stage back but does not taint it; the taint follows
     * the confirmed power-off.
     */
    @Test
    void aDumpingNodeNotRecordedFencedIsTaintedOnlyAfterThePowerOff() throws Exception {
        config(new KdumpSpec(true, "10m"), stage("bmc", "fence_good", false));
        fencedAt.set(null);
        watchdog.set("missing: /dev/watchdog not found");
        kdump.record(java.net.InetAddress.getByName("198.18.0.3"), now.get().minusSeconds(5));
        controller("replica-1").start();

        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Dumping);
        await().during(1, TimeUnit.SECONDS).atMost(5, TimeUnit.SECONDS).until(() -> !tainted()
                && agents.log("fence_good").isEmpty());
        assertThat(record().getStatus().taintedAt()).isNull();

        now.set(now.get().plusSeconds(30));
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced && tainted());
        assertThat(agents.power("plug-a")).isEqualTo("off");
    }

    @Test
    void aDumpLongerThanTheKdumpTimeoutNoLongerHoldsThePowerStageBack() throws Exception {
        config(new KdumpSpec(true, "1m"), stage("bmc", "fence_good", false));
        kdump.record(java.net.InetAddress.getByName("198.18.0.3"), now.get());
        NodeFencingController c = controller("replica-1");
        c.tick();
        c.tick();
        await().atMost(10, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Dumping);

        // Messages keep coming, but a minute has passed since the first one.
        now.set(now.get().plusSeconds(61));
        kdump.record(java.net.InetAddress.getByName("198.18.0.3"), now.get());
        c.start();
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced);
    }

    @Test
    void kdumpMessagesAreIgnoredWhenTheConfigDoesNotEnableKdump() throws Exception {
        config(stage("bmc", "fence_good", false));
        kdump.record(java.net.InetAddress.getByName("198.18.0.3"), now.get());
        controller("replica-1").start();

        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced);
        assertThat(record().getStatus().kdumpStartedAt()).isNull();
    }

    @Test
    void aConfigWithAnInvalidKdumpTimeoutDoesNotHoldBackAnotherNode() throws Exception {
        // Written around the schema (the mock does not validate): node-a dumps, its config's kdump.timeout is bad.
        kdump.record(java.net.InetAddress.getByName("198.18.0.3"), now.get());
        NodeFencingConfig bad = new NodeFencingConfig();
        bad.setMetadata(new ObjectMetaBuilder().withName("a-bad").build());
        bad.setSpec(new NodeFencingConfigSpec(null, List.of("node-a"), List.of(stage("bmc", "fence_good", false)),
                null, "30s", new KdumpSpec(true, "soon")));
        client.resources(NodeFencingConfig.class).resource(bad).create();
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-b")
                .withAnnotations(Map.of(PLUG_ANNOTATION, "plug-b")).endMetadata().build()).create();
        NodeFencingConfig good = new NodeFencingConfig();
        good.setMetadata(new ObjectMetaBuilder().withName("b-good").build());
        good.setSpec(new NodeFencingConfigSpec(null, List.of("node-b"), List.of(stage("bmc", "fence_good", false)),
                null, "30s", null));
        client.resources(NodeFencingConfig.class).resource(good).create();
        InstantSource clock = now::get;
        NodeFencingController.Sources sources = new NodeFencingController.Sources() {
            @Override
            public List<EscalationTrigger.Candidate> candidates() {
                return List.of("node-a", "node-b").stream().map(n -> client.nodes().withName(n).get())
                        .map(n -> new EscalationTrigger.Candidate(n, "worker", fencedAt.get(), "ok", false, false,
                                NodeFacts.of(n, null))).toList();
            }

            @Override
            public boolean returned(String node) {
                return false;
            }
        };
        NodeFencingController c = new NodeFencingController(client, new FenceStageExecutor(
                new ProcessFenceAgentRunner(dir), new KubernetesSecretSource(client), clock, "replica-1"),
                new ClusterWriter(client, clock), sources, kdump, admission, leading::get, clock, "replica-1",
                Duration.ofSeconds(40), Duration.ofMillis(100), 2);
        controllers.add(c);
        c.start();

        await().atMost(20, TimeUnit.SECONDS).until(() -> agents.power("plug-b").equals("off"));
        assertThat(agents.power("plug-a")).isEqualTo("on");
    }

    @Test
    void aStormLimitHoldsTheEscalationBackUntilItIsLifted() throws Exception {
        config(stage("bmc", "fence_good", false));
        stormLimit.set("only 1 of 3 nodes of group worker are healthy");
        NodeFencingController c = controller("replica-1");
        c.tick();
        assertThat(records()).isEmpty();
        assertThat(agents.log("fence_good")).isEmpty();

        stormLimit.set(null);
        c.start();
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced && tainted());
    }

    @Test
    void aNodeWithoutAWorkingWatchdogIsFencedWithoutWaitingForSafeToAssumeFenced() throws Exception {
        config(stage("bmc", "fence_good", false));
        fencedAt.set(null);
        watchdog.set("missing: /dev/watchdog not found");
        controller("replica-1").start();

        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced && tainted());
        assertThat(record().getSpec().reason()).contains("its watchdog not open (missing: /dev/watchdog not found)");
    }

    /**
     * "not opened" is what any disarmed agent reports. A node disarmed for maintenance (or stopped cleanly) and then
     * rebooted is gone for a while without having failed: it must not be powered off in the middle of the reboot.
     * One that had not armed for another reason (quorum not yet held) could not fence itself and is escalated.
     */
    @Test
    void aNodeDisarmedOnPurposeIsNotPowerFencedWhenItGoesAwayButOneThatCouldNotArmIs() throws Exception {
        config(stage("bmc", "fence_good", false));
        fencedAt.set(null);
        watchdog.set("not opened");
        onPurpose.set(true);
        NodeFencingController c = controller("replica-1");
        c.tick();
        c.tick();
        assertThat(records()).isEmpty();

        onPurpose.set(false);
        c.tick();
        assertThat(record().getSpec().reason()).contains("its watchdog not open (not opened)");
    }

    /**
     * A stage whose run throws (a defect, not a fence agent's answer) is not run again at the next tick, which
     * follows at once: it waits out a pause, and after its third attempt it is recorded Failed and the next stage
     * runs.
     */
    @Test
    void aStageThatThrowsIsRetriedAfterAPauseAndRecordedFailedAtItsThirdAttempt() throws Exception {
        config(stage("bmc", "fence_boom", false), stage("pdu", "fence_good", false));
        ProcessFenceAgentRunner real = new ProcessFenceAgentRunner(dir);
        java.util.concurrent.atomic.AtomicInteger thrown = new java.util.concurrent.atomic.AtomicInteger();
        controller("replica-1", (agent, arguments, timeout) -> {
            if (agent.equals("fence_boom")) {
                thrown.incrementAndGet();
                throw new IllegalStateException("boom");
            }
            return real.run(agent, arguments, timeout);
        }).start();

        for (int attempt = 1; attempt <= NodeFencingController.STAGE_ERROR_ATTEMPTS; attempt++) {
            int expected = attempt;
            await().atMost(10, TimeUnit.SECONDS).until(() -> thrown.get() == expected);
            if (attempt < NodeFencingController.STAGE_ERROR_ATTEMPTS) {
                // Ticks every 100 ms: without the pause the stage would run again at once.
                await().during(700, TimeUnit.MILLISECONDS).atMost(3, TimeUnit.SECONDS)
                        .until(() -> thrown.get() == expected);
                assertThat(record().getStatus().stages()).singleElement().satisfies(r -> {
                    assertThat(r.result()).isEqualTo(StageRun.RUNNING);
                    assertThat(r.attempts()).isEqualTo(expected);
                });
                now.set(now.get().plus(NodeFencingController.STAGE_ERROR_BACKOFF).plusSeconds(1));
            }
        }
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced && tainted());
        assertThat(record().getStatus().stages()).extracting(StageRun::name, StageRun::result)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("bmc", StageRun.FAILED),
                        org.assertj.core.groups.Tuple.tuple("pdu", StageRun.SUCCEEDED));
        assertThat(record().getStatus().stages().get(0).message())
                .contains("failed to run the stage 3 times", "boom");
        assertThat(thrown.get()).isEqualTo(NodeFencingController.STAGE_ERROR_ATTEMPTS);
    }

    /**
     * A record whose node returned goes once its retention has passed after {@code recoveredAt} (not before, not with
     * retention zero); a record whose node has not returned stays however old it is.
     */
    @Test
    void aClosedRecordIsDeletedOnceItsRetentionHasPassedAndAnOpenOneNever() throws Exception {
        config(stage("bmc", "fence_other", false), stage("pdu", "fence_good", false));
        NodeFencingController c = controller("replica-1");
        c.tick();
        returned.set(true);
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Recovered);
        fencedAt.set(null); // node-a is healthy again: no new escalation for it
        String closed = record().getMetadata().getName();
        Instant recoveredAt = Instant.parse(record().getStatus().recoveredAt());

        NodeFencing open = new NodeFencing();
        open.setMetadata(new ObjectMetaBuilder().withName("node-b-1").build());
        // a config that is gone: the tick leaves the record alone apart from the retention rule
        open.setSpec(new NodeFencingSpec("node-b", "worker", "test", "gone"));
        open = client.resources(NodeFencing.class).resource(open).create();
        open.setStatus(EscalationPlanner.empty(recoveredAt.minus(Duration.ofDays(400))));
        client.resources(NodeFencing.class).resource(open).updateStatus();

        c.retainClosedRecords(Duration.ZERO);
        now.set(recoveredAt.plus(Duration.ofDays(3650)));
        c.tick();
        assertThat(records()).extracting(r -> r.getMetadata().getName()).containsExactlyInAnyOrder(closed, "node-b-1");

        c.retainClosedRecords(Duration.ofDays(10));
        now.set(recoveredAt.plus(Duration.ofDays(10)).minusSeconds(1));
        c.tick();
        assertThat(records()).hasSize(2);
        now.set(recoveredAt.plus(Duration.ofDays(10)));
        c.tick();
        assertThat(records()).extracting(r -> r.getMetadata().getName()).containsExactly("node-b-1");
        assertThatThrownBy(() -> c.retainClosedRecords(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--node-fencing-retention");
    }

    /**
     * A node that is back before any stage confirmed power off (a hung node that recovered while its BMC stage
     * failed) is not powered off by the next stage: the record closes.
     */
    @Test
    void aNodeThatReturnsBeforeAStageConfirmedPowerOffIsNotPoweredOffByTheNextStage() throws Exception {
        config(stage("bmc", "fence_other", false), stage("pdu", "fence_good", false));
        NodeFencingController c = controller("replica-1");
        c.tick();
        // bmc is claimed and runs (it cannot be called back); the node comes back meanwhile.
        assertThat(record().getStatus().stages()).singleElement()
                .satisfies(r -> assertThat(r.result()).isEqualTo(StageRun.RUNNING));
        returned.set(true);
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Recovered);
        assertThat(record().getStatus().stages()).extracting(StageRun::name, StageRun::result)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("bmc", StageRun.FAILED));
        assertThat(record().getStatus().conditions()).anySatisfy(cond -> {
            assertThat(cond.getType()).isEqualTo("Recovered");
            assertThat(cond.getReason()).isEqualTo("NodeReturned");
            assertThat(cond.getMessage()).contains("before a stage confirmed power off");
        });
        assertThat(agents.log("fence_good")).isEmpty();
        assertThat(tainted()).isFalse();
        assertThat(finished).containsExactly("worker/node-a");
    }

    /**
     * powerAction Reboot: the stage confirms the node off (what lets its workloads move), then powers it on so it
     * boots by itself; the record closes when it is back, with no recover annotation.
     */
    @Test
    void withRebootTheNodeIsPoweredOnAgainAfterTheConfirmedOffAndTheRecordClosesWhenItReturns() throws Exception {
        powerAction = dev.fencing.api.fencing.v1alpha1.FencePowerAction.Reboot;
        config(stage("bmc", "fence_good", false));
        controller("replica-1").start();

        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced && tainted());
        assertThat(agents.power("plug-a")).isEqualTo("on");
        assertThat(agents.log("fence_good").lines().filter(l -> l.startsWith("action=")).toList())
                .containsExactly("action=status", "action=off", "action=status", "action=on");
        StageRun bmc = record().getStatus().stages().get(0);
        assertThat(bmc.result()).isEqualTo(StageRun.SUCCEEDED);
        assertThat(bmc.message()).isEqualTo("method m confirmed power off, then powered on again");

        returned.set(true);
        await().atMost(20, TimeUnit.SECONDS).until(() -> EscalationPlanner.closed(record()));
        assertThat(agents.log("fence_good").lines().filter(l -> l.equals("action=on")).count())
                .as("no recovery stage ran").isEqualTo(1);
    }

    @Test
    void aFailedStageMovesToTheNextOne() throws Exception {
        // fence_other expects another password: the BMC refuses, the PDU stage fences.
        config(stage("bmc", "fence_other", false), stage("pdu", "fence_good", false));
        controller("replica-1").start();

        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced && tainted());
        assertThat(record().getStatus().stages()).extracting(StageRun::name, StageRun::result)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("bmc", StageRun.FAILED),
                        org.assertj.core.groups.Tuple.tuple("pdu", StageRun.SUCCEEDED));
    }

    @Test
    void aMustSucceedStageThatFailsStopsTheEscalationWithoutATaint() throws Exception {
        config(stage("bmc", "fence_other", true), stage("pdu", "fence_good", false));
        NodeFencingController c = controller("replica-1");
        c.start();

        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Failed);
        // Someone must act: a Warning Event on the Node, and the leader's gauge behind FencingPowerFencingFailed.
        await().atMost(10, TimeUnit.SECONDS).until(() -> client.v1().events().inNamespace("default").list().getItems()
                .stream().anyMatch(e -> "PowerFencingFailed".equals(e.getReason())
                        && "node-a".equals(e.getInvolvedObject().getName()) && "Warning".equals(e.getType())
                        && e.getMessage().contains("no stage confirmed it powered off")));
        await().atMost(10, TimeUnit.SECONDS).until(() -> c.failedRecords() == 1);
        leading.set(false);
        assertThat(c.failedRecords()).as("a follower counts none").isZero();
        leading.set(true);
        NodeFencingStatus s = record().getStatus();
        assertThat(s.stages()).extracting(StageRun::name).containsExactly("bmc");
        assertThat(s.conditions()).anySatisfy(cond -> assertThat(cond.getReason()).isEqualTo("MustSucceedStageFailed"));
        assertThat(tainted()).isFalse();
        assertThat(agents.log("fence_good")).isEmpty();
        assertThat(records()).hasSize(1);
        assertThat(finished).containsExactly("worker/node-a");
        // The Failed record still holds node-a (no second record) but no longer counts as a fencing in progress.
        inProgress.clear();
        await().during(600, TimeUnit.MILLISECONDS).atMost(3, TimeUnit.SECONDS)
                .until(() -> inProgress.isEmpty() && records().size() == 1);
    }

    @Test
    void theRecoveryStagePowersTheNodeOnWhenTheRecordIsAnnotated() throws Exception {
        config(stage("bmc", "fence_good", false));
        controller("replica-1").start();
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced && tainted());

        // As `kubectl annotate` would; the controller may still be writing the record's status (409: try again).
        await().atMost(10, TimeUnit.SECONDS)
                .ignoreExceptionsInstanceOf(io.fabric8.kubernetes.client.KubernetesClientException.class)
                .until(() -> client.resources(NodeFencing.class).withName(record().getMetadata().getName())
                        .edit(r -> {
                            r.getMetadata().setAnnotations(Map.of(NodeFencing.RECOVER_ANNOTATION, "ticket-42"));
                            return r;
                        }) != null);

        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Recovered);
        assertThat(agents.power("plug-a")).isEqualTo("on");
        assertThat(record().getStatus().recovery().result()).isEqualTo(StageRun.SUCCEEDED);
        String poweredOnAt = record().getStatus().recoveredAt();
        assertThat(poweredOnAt).isNotNull();

        // The node boots: still unheard and recorded as fenced, yet nothing powers it off again.
        await().during(1500, TimeUnit.MILLISECONDS).atMost(5, TimeUnit.SECONDS)
                .until(() -> records().size() == 1 && agents.power("plug-a").equals("on"));

        returned.set(true);
        await().atMost(20, TimeUnit.SECONDS).until(() -> EscalationPlanner.closed(record()));
        assertThat(record().getStatus().recoveredAt()).isEqualTo(poweredOnAt);
    }

    @Test
    void aRecordClosesWhenTheNodeReturnsAndANewEventGetsANewRecord() throws Exception {
        config(stage("bmc", "fence_good", false));
        controller("replica-1").start();
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced && tainted());

        returned.set(true);
        fencedAt.set(null);
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Recovered);
        assertThat(finished).containsExactly("worker/node-a");

        returned.set(false);
        now.set(now.get().plusSeconds(600));
        fencedAt.set(now.get().minusSeconds(60));
        await().atMost(20, TimeUnit.SECONDS).until(() -> records().size() == 2);
    }

    @Test
    void aStageADeadReplicaLeftRunningIsRunAgainOnlyOnceItsBoundHasPassed() throws Exception {
        config(stage("bmc", "fence_good", false));
        leftByADeadReplica("bmc", new StageRun("bmc", StageRun.RUNNING, 1, now.get().toString(), "replica-dead", null,
                null, null));

        NodeFencingController c = controller("replica-2");
        c.tick();
        assertThat(record().getStatus().stages().get(0).runner()).isEqualTo("replica-dead");
        assertThat(agents.log("fence_good")).isEmpty();

        // bound: 1 method x (status, off, status) x 10s + 30s margin
        now.set(now.get().plus(Duration.ofSeconds(60)));
        c.start();

        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced && tainted());
        StageRun run = record().getStatus().stages().get(0);
        assertThat(run.attempts()).isEqualTo(2);
        assertThat(run.runner()).isEqualTo("replica-2");
        assertThat(records()).hasSize(1);
    }

    /**
     * Review 3 #2, scenario A: replica A lists the records (none), then stalls past its Lease; replica B (20 s later
     * on its clock) leads meanwhile and starts the escalation. A resumes inside the same tick, still believing it
     * leads: the record's name is the fencing event's, so A's create gets 409 and A runs nothing.
     */
    @Test
    void aReplicaThatStalledAfterListingDoesNotStartASecondEscalation() throws Exception {
        config(stage("bmc", "fence_good", false));
        NodeFencingController b = controller("replica-b", new ProcessFenceAgentRunner(dir),
                () -> now.get().plusSeconds(20), sources(() -> candidates(false), node -> false));
        AtomicBoolean stalled = new AtomicBoolean();
        NodeFencingController a = controller("replica-a", new ProcessFenceAgentRunner(dir), now::get,
                sources(() -> {
                    if (stalled.compareAndSet(false, true)) {
                        b.tick(); // the stall: B's whole tick between A's list and A's create
                    }
                    return candidates(false);
                }, node -> false));

        a.tick();
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced && tainted());
        await().during(1, TimeUnit.SECONDS).atMost(5, TimeUnit.SECONDS).until(() -> records().size() == 1);
        assertThat(record().getStatus().stages()).singleElement()
                .satisfies(r -> assertThat(r.runner()).isEqualTo("replica-b"));
        assertThat(agentRuns("fence_good", "off")).as("power actions for one fencing event").isEqualTo(1);
        assertThat(record().getMetadata().getName()).isEqualTo("node-a-" + fencedAt.get().getEpochSecond());
    }

    /**
     * Review 3 #2, scenario B: node-a came back while replica A stalled past its Lease; B leads and sees it back
     * (its agent reports to B). A resumes with its stale view (recorded fenced, not reporting here) but its Lease
     * was last renewed beyond the renew deadline on its monotonic clock: it creates nothing and powers nothing off.
     */
    @Test
    void aStalledReplicaDoesNotPowerOffANodeThatReturnedWhileItWasStalled() throws Exception {
        config(stage("bmc", "fence_good", false));
        NodeFencingController b = controller("replica-b", new ProcessFenceAgentRunner(dir),
                () -> now.get().plusSeconds(20), sources(() -> candidates(true), node -> true));
        java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();
        TieBreakArbiter leaseOfA = new TieBreakArbiter(nanos::get, Duration.ofSeconds(10), Duration.ofSeconds(15),
                Duration.ofSeconds(10));
        leaseOfA.startedLeading();
        leaseOfA.leaseRenewed(nanos.get());
        AtomicBoolean stalled = new AtomicBoolean();
        NodeFencingController a = controller("replica-a", new ProcessFenceAgentRunner(dir), now::get,
                sources(() -> {
                    if (stalled.compareAndSet(false, true)) {
                        nanos.addAndGet(Duration.ofSeconds(20).toNanos());
                        b.tick();
                    }
                    return candidates(false);
                }, node -> false)).honestLeadership(leaseOfA::leadershipDoubt);

        a.tick();
        await().during(1, TimeUnit.SECONDS).atMost(5, TimeUnit.SECONDS)
                .until(() -> agents.power("plug-a").equals("on") && agents.log("fence_good").isEmpty());
        assertThat(records()).isEmpty();
    }

    /**
     * Review 3 #2: a new leader holds no report of agents that stream to other replicas until those forward them,
     * so a node that is back looks silent for a moment. For --report-stale-after after it starts leading it creates
     * no record.
     */
    @Test
    void aNewLeaderStartsNoEscalationUntilTheAgentsReportsHadTimeToArrive() throws Exception {
        config(stage("bmc", "fence_good", false));
        leading.set(false);
        NodeFencingController c = controller("replica-2").holdAfterLeading(Duration.ofSeconds(30));
        c.tick();
        leading.set(true);
        c.tick();
        now.set(now.get().plusSeconds(29));
        c.tick();
        assertThat(records()).as("no record while reports may still be on their way").isEmpty();

        now.set(now.get().plusSeconds(1));
        c.tick();
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced);
    }

    /** The same hold for the next stage of a record the previous leader left (bmc failed, pdu next). */
    @Test
    void aNewLeaderStartsNoStageOfARecordItTookOverUntilTheAgentsReportsHadTimeToArrive() throws Exception {
        config(stage("bmc", "fence_other", false), stage("pdu", "fence_good", false));
        leftByADeadReplica("pdu", new StageRun("bmc", StageRun.FAILED, 1, now.get().toString(), "replica-dead",
                now.get().toString(), "refused", null));

        NodeFencingController c = controller("replica-2").holdAfterLeading(Duration.ofSeconds(30));
        c.tick();
        now.set(now.get().plusSeconds(29));
        c.tick();
        assertThat(agents.log("fence_good")).isEmpty();
        assertThat(record().getStatus().stages()).singleElement()
                .satisfies(r -> assertThat(r.name()).isEqualTo("bmc"));

        now.set(now.get().plusSeconds(1));
        c.tick();
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced);
        assertThat(records()).hasSize(1);
    }

    /**
     * Review 3 #3: deleting a Failed record (what the runbook used to say after a manual power-off) does not start
     * the same failing escalation again: the record stays, terminating, and holds its node; no agent runs, no
     * taint, and it no longer counts as failed. It goes once the node returned.
     */
    @Test
    void aDeletedFailedRecordHoldsItsNodeUntilItReturns() throws Exception {
        config(stage("bmc", "fence_other", true));
        NodeFencingController c = controller("replica-1");
        c.start();
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Failed);
        await().atMost(10, TimeUnit.SECONDS).until(() -> c.failedRecords() == 1);
        long runs = agentRuns("fence_other", "status");

        client.resources(NodeFencing.class).withName(record().getMetadata().getName()).delete();
        await().during(1500, TimeUnit.MILLISECONDS).atMost(5, TimeUnit.SECONDS)
                .until(() -> records().size() == 1 && EscalationPlanner.deleted(record())
                        && agentRuns("fence_other", "status") == runs);
        assertThat(tainted()).isFalse();
        assertThat(c.failedRecords()).as("deleted: acknowledged, no longer failed").isZero();

        returned.set(true);
        fencedAt.set(null); // back: no longer recorded fenced
        await().atMost(10, TimeUnit.SECONDS).until(() -> records().isEmpty());
    }

    /**
     * Review 3 #3: the operator powered the node of a Failed record off by hand and annotates the record: it becomes
     * Fenced and the node is tainted, with no agent run and no new record; a Node that is Ready is not tainted.
     */
    @Test
    void confirmingAManualPowerOffOfAFailedRecordTaintsTheNodeUnlessItIsReady() throws Exception {
        config(stage("bmc", "fence_other", false));
        NodeFencingController c = controller("replica-1");
        c.start();
        await().atMost(20, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Failed);
        long runs = agentRuns("fence_other", "status");
        client.nodes().withName("node-a").edit(n -> {
            n.getStatus().getConditions().get(0).setStatus("True");
            return n;
        });

        annotate(NodeFencing.POWERED_OFF_ANNOTATION, "jdoe: off at the PDU, ticket 42");
        await().atMost(10, TimeUnit.SECONDS).until(() -> phase() == NodeFencingPhase.Fenced);
        await().during(1, TimeUnit.SECONDS).atMost(5, TimeUnit.SECONDS).until(() -> !tainted());

        client.nodes().withName("node-a").edit(n -> {
            n.getStatus().getConditions().get(0).setStatus("False");
            return n;
        });
        // The taint goes on the Node first, then taintedAt into the record: wait for both.
        await().atMost(10, TimeUnit.SECONDS).until(() -> tainted() && record().getStatus().taintedAt() != null);
        NodeFencingStatus s = record().getStatus();
        assertThat(s.taintedAt()).isNotNull();
        assertThat(s.fencedAt()).isNotNull();
        assertThat(s.conditions()).anySatisfy(cond -> {
            assertThat(cond.getType()).isEqualTo("Fenced");
            assertThat(cond.getStatus()).isEqualTo("True");
            assertThat(cond.getReason()).isEqualTo("PowerOffConfirmedByOperator");
            assertThat(cond.getMessage()).contains("jdoe: off at the PDU, ticket 42");
        });
        assertThat(agentRuns("fence_other", "status")).isEqualTo(runs);
        assertThat(records()).hasSize(1);
        await().atMost(10, TimeUnit.SECONDS).until(() -> c.failedRecords() == 0);
    }

    // As `kubectl annotate` would; the controller may still be writing the record's status (409: try again).
    private void annotate(String key, String value) {
        await().atMost(10, TimeUnit.SECONDS)
                .ignoreExceptionsInstanceOf(io.fabric8.kubernetes.client.KubernetesClientException.class)
                .until(() -> client.resources(NodeFencing.class).withName(record().getMetadata().getName())
                        .edit(r -> {
                            Map<String, String> annotations = new java.util.HashMap<>(
                                    r.getMetadata().getAnnotations() == null ? Map.of()
                                            : r.getMetadata().getAnnotations());
                            annotations.put(key, value);
                            r.getMetadata().setAnnotations(annotations);
                            return r;
                        }) != null);
    }
}
