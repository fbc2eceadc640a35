package dev.fencing.kubetest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The sweeper kills what a dead JVM left behind and nothing else. */
class ControlPlaneRunsTest {

    @Test
    void anAbandonedRunIsKilledAndDeleted() throws IOException, InterruptedException {
        Process deadOwner = new ProcessBuilder("true").start();
        deadOwner.waitFor(10, TimeUnit.SECONDS);
        Process leftover = new ProcessBuilder("sleep", "300").start();
        try {
            Path run = ControlPlaneRuns.ROOT.resolve("sweeper-test-" + ProcessHandle.current().pid());
            Files.createDirectories(run);
            // the owner's pid with a start time it cannot have: a dead (or reused) owner
            Files.writeString(run.resolve("owner"), deadOwner.pid() + " 1\n", StandardCharsets.UTF_8);
            ControlPlaneRuns.recordChild(run, leftover.pid());

            assertThat(ControlPlaneRuns.sweepAbandoned()).contains(run.getFileName().toString());

            await().atMost(Duration.ofSeconds(10)).until(() -> !leftover.isAlive());
            assertThat(run).doesNotExist();
        } finally {
            leftover.destroyForcibly();
        }
    }

    @Test
    void aLiveOwnersRunAndAReusedPidAreLeftAlone() throws IOException, InterruptedException {
        Process deadOwner = new ProcessBuilder("true").start();
        deadOwner.waitFor(10, TimeUnit.SECONDS);
        Process bystander = new ProcessBuilder("sleep", "300").start();
        try {
            Path live = ControlPlaneRuns.claim("sweeper-live-" + ProcessHandle.current().pid());
            Path dead = ControlPlaneRuns.ROOT.resolve("sweeper-reused-" + ProcessHandle.current().pid());
            Files.createDirectories(dead);
            Files.writeString(dead.resolve("owner"), deadOwner.pid() + " 1\n", StandardCharsets.UTF_8);
            // the recorded start time does not match the bystander's: its pid was "reused"
            Files.writeString(dead.resolve("pids"), bystander.pid() + " 1\n", StandardCharsets.UTF_8);

            ControlPlaneRuns.sweepAbandoned();

            assertThat(live).exists();
            assertThat(dead).doesNotExist();
            assertThat(bystander.isAlive()).isTrue();
            ControlPlaneRuns.delete(live);
        } finally {
            bystander.destroyForcibly();
        }
    }
}
