package dev.fencing.nodemanager.escalation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.api.fencing.v1alpha1.AgentInvocation;
import dev.fencing.api.fencing.v1alpha1.ExecutionPolicy;
import dev.fencing.api.fencing.v1alpha1.FenceMethod;
import dev.fencing.api.fencing.v1alpha1.FenceParameter;
import dev.fencing.api.fencing.v1alpha1.FenceStage;
import dev.fencing.api.fencing.v1alpha1.MethodRun;
import dev.fencing.api.fencing.v1alpha1.SecretKeyRef;
import dev.fencing.api.fencing.v1alpha1.SecretParameter;
import dev.fencing.api.fencing.v1alpha1.StageRun;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A stage run against fake fence agents (real processes speaking the stdin protocol). */
class FenceStageExecutorTest {

    private static final SecretKeyRef REF = new SecretKeyRef("ns", "bmc", "password");

    @TempDir
    Path dir;
    private FakeFenceAgents agents;
    private FenceStageExecutor executor;

    @BeforeEach
    void setUp() throws Exception {
        agents = new FakeFenceAgents(dir).working("fence_good", "s3cret").working("fence_other", "other-pw")
                .hanging("fence_hang");
        executor = new FenceStageExecutor(new ProcessFenceAgentRunner(dir),
                ref -> ref.equals(REF) ? Optional.of("s3cret") : Optional.empty(), InstantSource.system(),
                "test-replica");
    }

    private static FenceMethod method(String name, String agent, String plug) {
        return new FenceMethod(name, agent, List.of(new FenceParameter("plug", plug)),
                List.of(new SecretParameter("password", REF)));
    }

    private static FenceStage stage(ExecutionPolicy policy, String timeout, FenceMethod... methods) {
        return new FenceStage("bmc", policy, null, timeout, List.of(methods));
    }

    @Test
    void aMethodRunsStatusOffStatusAndSucceedsWhenTheLastStatusSaysOff() throws Exception {
        StageRun run = executor.run(stage(null, "10s", method("m1", "fence_good", "$(NODE_NAME)")),
                PowerAction.OFF, "node-a", Map.of(), 1);

        assertThat(run.result()).isEqualTo(StageRun.SUCCEEDED);
        assertThat(run.attempts()).isEqualTo(1);
        assertThat(run.methods()).singleElement().satisfies(m -> {
            assertThat(m.succeeded()).isTrue();
            assertThat(m.invocations()).extracting(AgentInvocation::action, AgentInvocation::exitCode)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("status", 0),
                            org.assertj.core.groups.Tuple.tuple("off", 0),
                            org.assertj.core.groups.Tuple.tuple("status", 2));
        });
        assertThat(agents.power("node-a")).isEqualTo("off");
        assertThat(agents.log("fence_good")).contains("action=off\nplug=node-a\npassword=s3cret\n");
    }

    @Test
    void secretValuesNeverReachTheRecordedOutput() throws Exception {
        StageRun run = executor.run(stage(null, "10s", method("m1", "fence_good", "node-a")), PowerAction.OFF,
                "node-a", Map.of(), 1);

        String everything = run.toString();
        assertThat(everything).doesNotContain("s3cret").contains("connecting with password ***");
    }

    @Test
    void policyOneMovesToTheNextMethodWhenOneFails() throws Exception {
        // fence_other expects another password: its status fails, so the stage tries m2.
        StageRun run = executor.run(stage(ExecutionPolicy.One, "10s", method("m1", "fence_other", "node-a"),
                method("m2", "fence_good", "node-a"), method("m3", "fence_good", "node-b")), PowerAction.OFF,
                "node-a", Map.of(), 1);

        assertThat(run.result()).isEqualTo(StageRun.SUCCEEDED);
        assertThat(run.methods()).extracting(MethodRun::name, MethodRun::succeeded)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("m1", false),
                        org.assertj.core.groups.Tuple.tuple("m2", true));
        assertThat(run.methods().get(0).invocations()).extracting(AgentInvocation::action).containsExactly("status");
        assertThat(agents.power("node-b")).as("m3 never ran").isEqualTo("on");
    }

    @Test
    void policyAllNeedsEveryMethodAndRunsThemAll() throws Exception {
        StageRun run = executor.run(stage(ExecutionPolicy.All, "10s", method("feed-a", "fence_good", "psu-a"),
                method("feed-b", "fence_other", "psu-b"), method("feed-c", "fence_good", "psu-c")),
                PowerAction.OFF, "node-a", Map.of(), 2);

        assertThat(run.result()).isEqualTo(StageRun.FAILED);
        assertThat(run.message()).isEqualTo("not every method confirmed power off");
        assertThat(run.methods()).extracting(MethodRun::succeeded).containsExactly(true, false, true);
        assertThat(agents.power("psu-a")).isEqualTo("off");
        assertThat(agents.power("psu-c")).isEqualTo("off");
    }

    @Test
    void anAgentBeyondTheStageTimeoutIsKilledAndTheMethodFails() {
        StageRun run = executor.run(stage(null, "1s", method("m1", "fence_hang", "node-a")), PowerAction.OFF,
                "node-a", Map.of(), 1);

        assertThat(run.result()).isEqualTo(StageRun.FAILED);
        AgentInvocation status = run.methods().get(0).invocations().get(0);
        assertThat(status.exitCode()).isNull();
        assertThat(status.error()).isEqualTo("timed out after 1s; killed");
    }

    @Test
    void anAgentThatIsNotInstalledFailsTheMethodWithWhatToInstall() {
        StageRun run = executor.run(stage(null, "5s", method("m1", "fence_absent", "node-a")), PowerAction.OFF,
                "node-a", Map.of(), 1);

        assertThat(run.result()).isEqualTo(StageRun.FAILED);
        assertThat(run.methods().get(0).invocations().get(0).error())
                .contains("fence_absent is not installed", "fence-agents", "--fence-agents-dir");
    }

    @Test
    void aTimeoutTheSchemaWouldRefuseFailsTheStageWithTheReasonAndRunsNothing() throws Exception {
        StageRun run = executor.run(stage(null, "500ms", method("m1", "fence_good", "node-a")), PowerAction.OFF,
                "node-a", Map.of(), 1);

        assertThat(run.result()).isEqualTo(StageRun.FAILED);
        assertThat(run.message()).contains("stage bmc timeout", "500ms");
        assertThat(agents.log("fence_good")).isEmpty();
    }

    @Test
    void theRecoveryActionPowersOnAndIsConfirmedByStatusOn() throws Exception {
        executor.run(stage(null, "10s", method("m1", "fence_good", "node-a")), PowerAction.OFF, "node-a", Map.of(),
                1);
        StageRun run = executor.run(stage(null, "10s", method("m1", "fence_good", "node-a")), PowerAction.ON,
                "node-a", Map.of(), 1);

        assertThat(run.result()).isEqualTo(StageRun.SUCCEEDED);
        assertThat(agents.power("node-a")).isEqualTo("on");
    }
}
