package dev.fencing.e2e.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentNode;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.proto.fencing.v1.Timings;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Four agents split 2+2 with {@code tieBreakers: [ControlPlane]}: the controller grants the tie to exactly one side,
 * which keeps feeding while the other fences; with the controller unreachable from every node nobody gets the tie
 * and both sides fence (safe). Runs on a {@link ControlPlaneLab} (agents configured by the controller only). Bounds
 * are {@code T_stop + watchdog timeout} from the agents' own status, plus slack.
 */
class ControlPlaneTieBreakIT {

    private static final List<String> NODES = List.of("node-1", "node-2", "node-3", "node-4");
    private static final Set<String> SIDE_A = Set.of("node-1", "node-2");
    private static final Set<String> SIDE_B = Set.of("node-3", "node-4");
    private static final Duration ARM = Duration.ofSeconds(90);
    /** Process start-up, the emulator's check period, a tie-break round trip and a loaded 2-core machine. */
    private static final Duration SLACK = Duration.ofSeconds(5);

    private ControlPlaneLab lab;
    private AgentCluster agents;
    private Duration bound;
    private String test;

    @BeforeEach
    void startLab(TestInfo info) {
        test = info.getTestMethod().orElseThrow().getName();
        AgentSettings fast = AgentSettings.fastFence();
        AgentSettings settings = new AgentSettings(fast.watchdogTimeout(), "Fence", List.of("ControlPlane"),
                fast.timings());
        lab = ControlPlaneLab.start(NODES, "workers", settings, ProjectLayout.fromWorkingDirectory(),
                "controlplane-tiebreak");
        agents = lab.agents();
        long armed = agents.awaitAllArmed(ARM);
        Timings timings = agents.timings("node-1");
        Duration tStop = Duration.ofSeconds(timings.getTStop().getSeconds(), timings.getTStop().getNanos());
        bound = tStop.plus(settings.watchdogTimeout());
        System.out.printf("%s: 4 agents armed after %d ms; T_stop=%d ms, watchdog %d s (logs %s)%n", test, armed,
                tStop.toMillis(), settings.watchdogTimeout().toSeconds(), lab.logDir());
    }

    @AfterEach
    void tearDown() {
        if (lab != null) {
            lab.close();
        }
    }

    @Test
    void evenSplitLeavesExactlyOneSideFeedingWhenTheControllerGrantsTheTie() {
        long cut = System.nanoTime();
        lab.lab().partition(SIDE_A, SIDE_B);
        sleep(bound.plus(SLACK));

        boolean aFenced = SIDE_A.stream().allMatch(n -> !agents.node(n).watchdogEvents("reset", cut).isEmpty());
        boolean bFenced = SIDE_B.stream().allMatch(n -> !agents.node(n).watchdogEvents("reset", cut).isEmpty());
        assertThat(aFenced ^ bFenced).as("exactly one side fenced (A fenced: %s, B fenced: %s)", aFenced, bFenced)
                .isTrue();
        Set<String> winners = aFenced ? SIDE_B : SIDE_A;
        Set<String> losers = aFenced ? SIDE_A : SIDE_B;
        long checkFeeds = System.nanoTime();
        sleep(Duration.ofSeconds(3));
        for (String node : winners) {
            AgentNode agent = agents.node(node);
            assertThat(agent.watchdogEvents("reset", cut)).as(node + " on the granted side reset").isEmpty();
            assertThat(agent.watchdogEvents("feed", checkFeeds)).as(node + " on the granted side feeds").isNotEmpty();
            assertThat(agent.status().orElseThrow().getTieBreakerOutcome()).as(node + " tie-breaker outcome")
                    .containsIgnoringCase("ControlPlane");
        }
        StringBuilder report = new StringBuilder(test + ": granted side " + winners + ", fenced side " + losers);
        for (String node : losers) {
            long reset = agents.node(node).watchdogEvents("reset", cut).get(0).receivedNanos();
            report.append(String.format("; %s reset %d ms after the split", node, (reset - cut) / 1_000_000));
        }
        System.out.println(report + " (bound " + bound.toMillis() + " ms)");
    }

    @Test
    void evenSplitWithTheControllerUnreachableFencesBothSides() {
        lab.controlPlane().unreachableFrom(NODES);
        long cut = System.nanoTime();
        lab.lab().partition(SIDE_A, SIDE_B);
        StringBuilder report = new StringBuilder(test + ": controller unreachable, 2+2 split");
        for (String node : NODES) {
            AgentNode agent = agents.node(node);
            long deadline = cut + bound.plus(SLACK).toNanos();
            while (agent.watchdogEvents("reset", cut).isEmpty() && System.nanoTime() < deadline) {
                sleep(Duration.ofMillis(200));
            }
            assertThat(agent.watchdogEvents("reset", cut)).as(node + " reset without a tie grant within "
                    + bound.plus(SLACK)).isNotEmpty();
            long reset = agent.watchdogEvents("reset", cut).get(0).receivedNanos();
            report.append(String.format("; %s reset after %d ms", node, (reset - cut) / 1_000_000));
        }
        System.out.println(report + " (bound " + bound.toMillis() + " ms)");
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
