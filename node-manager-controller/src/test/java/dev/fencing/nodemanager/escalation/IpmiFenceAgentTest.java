package dev.fencing.nodemanager.escalation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.fencing.v1alpha1.AgentInvocation;
import dev.fencing.api.fencing.v1alpha1.ExecutionPolicy;
import dev.fencing.api.fencing.v1alpha1.FenceMethod;
import dev.fencing.api.fencing.v1alpha1.FenceParameter;
import dev.fencing.api.fencing.v1alpha1.FenceStage;
import dev.fencing.api.fencing.v1alpha1.MethodRun;
import dev.fencing.api.fencing.v1alpha1.SecretKeyRef;
import dev.fencing.api.fencing.v1alpha1.SecretParameter;
import dev.fencing.api.fencing.v1alpha1.StageRun;
import dev.fencing.kubetest.IpmiSimulator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real ClusterLabs {@code fence_ipmilan} (Debian fence-agents, /usr/sbin) run by the escalation's executor
 * against a real BMC, OpenIPMI's {@code ipmi_sim} on loopback: status, off and on over IPMI 2.0 (lanplus) and 1.5,
 * the sim's power-off killing the simulated node's process, and a wrong password failing the method.
 */
class IpmiFenceAgentTest {

    private static final String PASSWORD = "bmc-pw-7f3a";
    private static final SecretKeyRef RIGHT = new SecretKeyRef("ns", "bmc", "password");
    private static final SecretKeyRef WRONG = new SecretKeyRef("ns", "bmc", "old-password");

    @TempDir
    Path dir;
    private IpmiSimulator bmc;
    private Process node;
    private FenceStageExecutor executor;

    @BeforeEach
    void startBmcAndNode() throws Exception {
        node = new ProcessBuilder("sleep", "600").start();
        bmc = IpmiSimulator.start(dir.resolve("bmc"), PASSWORD, "kill -9 " + node.pid());
        executor = new FenceStageExecutor(new ProcessFenceAgentRunner(Path.of("/usr/sbin")),
                ref -> ref.equals(RIGHT) ? Optional.of(PASSWORD) : ref.equals(WRONG) ? Optional.of("wrong-pw")
                        : Optional.empty(), InstantSource.system(), "test-replica");
    }

    @AfterEach
    void stop() {
        bmc.close();
        node.destroyForcibly();
    }

    private FenceMethod ipmi(String name, boolean lanplus, SecretKeyRef password) {
        List<FenceParameter> params = new ArrayList<>(List.of(new FenceParameter("ip", "127.0.0.1"),
                new FenceParameter("ipport", String.valueOf(bmc.port())), new FenceParameter("username",
                        IpmiSimulator.USER)));
        if (lanplus) {
            params.add(new FenceParameter("lanplus", "1"));
            // ipmi_sim does not answer "Get Channel Cipher Suites"; naming suite 3 spares ipmitool a 10 s probe.
            params.add(new FenceParameter("cipher", "3"));
        }
        return new FenceMethod(name, "fence_ipmilan", params, List.of(new SecretParameter("password", password)));
    }

    private static FenceStage stage(FenceMethod... methods) {
        return new FenceStage("bmc", ExecutionPolicy.One, null, "60s", List.of(methods));
    }

    @Test
    void fenceIpmilanPowersTheNodeOffWhichKillsItsProcessesAndOnAgain() throws Exception {
        long start = System.nanoTime();
        StageRun off = executor.run(stage(ipmi("ipmi", true, RIGHT)), PowerAction.OFF, "node-a", Map.of(), 1);
        long offMillis = (System.nanoTime() - start) / 1_000_000;

        assertThat(off.result()).as(off.toString()).isEqualTo(StageRun.SUCCEEDED);
        assertThat(off.methods().get(0).invocations()).extracting(AgentInvocation::action, AgentInvocation::exitCode)
                .containsExactly(Tuple.tuple("status", 0), Tuple.tuple("off", 0), Tuple.tuple("status", 2));
        assertThat(bmc.power()).isEqualTo("0");
        await().atMost(Duration.ofSeconds(10)).until(() -> !node.isAlive());
        System.out.println("fence_ipmilan lanplus stage status+off+status against ipmi_sim: " + offMillis + " ms");

        StageRun on = executor.run(stage(ipmi("ipmi", true, RIGHT)), PowerAction.ON, "node-a", Map.of(), 1);

        assertThat(on.result()).as(on.toString()).isEqualTo(StageRun.SUCCEEDED);
        assertThat(on.methods().get(0).invocations()).extracting(AgentInvocation::action, AgentInvocation::exitCode)
                .containsExactly(Tuple.tuple("status", 2), Tuple.tuple("on", 0), Tuple.tuple("status", 0));
        assertThat(bmc.power()).isEqualTo("1");
        assertThat(bmc.events()).containsExactly("power 0", "power 1");
    }

    @Test
    void ipmiOneDotFiveWithoutLanplusWorksToo() throws Exception {
        StageRun off = executor.run(stage(ipmi("ipmi", false, RIGHT)), PowerAction.OFF, "node-a", Map.of(), 1);

        assertThat(off.result()).as(off.toString()).isEqualTo(StageRun.SUCCEEDED);
        assertThat(bmc.power()).isEqualTo("0");
    }

    @Test
    void aWrongPasswordFailsTheMethodWithoutAnyActionAndTheNextMethodFencesTheNode() throws Exception {
        StageRun run = executor.run(stage(ipmi("stale-credentials", true, WRONG), ipmi("current", true, RIGHT)),
                PowerAction.OFF, "node-a", Map.of(), 1);

        assertThat(run.result()).isEqualTo(StageRun.SUCCEEDED);
        assertThat(run.methods()).extracting(MethodRun::name, MethodRun::succeeded)
                .containsExactly(Tuple.tuple("stale-credentials", false), Tuple.tuple("current", true));
        AgentInvocation refused = run.methods().get(0).invocations().get(0);
        assertThat(refused.action()).isEqualTo("status");
        assertThat(refused.exitCode()).isEqualTo(1);
        assertThat(run.toString()).doesNotContain("wrong-pw").doesNotContain(PASSWORD);
        assertThat(bmc.events()).containsExactly("power 0");
    }

    @Test
    void aBmcThatIsDownFailsTheStage() throws Exception {
        bmc.close();
        // fence_ipmilan retries an unanswering BMC for longer than this: the stage's timeout ends it.
        StageRun run = executor.run(new FenceStage("bmc", null, null, "5s", List.of(ipmi("ipmi", true, RIGHT))),
                PowerAction.OFF, "node-a", Map.of(), 1);

        assertThat(run.result()).isEqualTo(StageRun.FAILED);
        assertThat(run.methods().get(0).invocations()).extracting(AgentInvocation::action).containsExactly("status");
        assertThat(node.isAlive()).isTrue();
        assertThat(Files.exists(dir.resolve("bmc").resolve("events"))).isFalse();
    }
}
