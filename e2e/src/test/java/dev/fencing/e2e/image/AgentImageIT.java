package dev.fencing.e2e.image;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentLauncher;
import dev.fencing.e2e.agent.AgentNode;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.agent.FencingConsumer;
import dev.fencing.e2e.netns.LabNode;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.HostCommand;
import dev.fencing.e2e.process.JsonLinesProcess;
import dev.fencing.e2e.process.LoggedProcess;
import dev.fencing.proto.fencing.v1.AgentStatus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The agent's container image ({@code target/images/fencing-agent.oci.tar}, built by {@code scripts/images}) run by
 * crun in a lab node's network namespace, as the DaemonSet runs it: the image's entrypoint (its jlinked runtime and
 * launcher options) with only the pod's arguments, a read-only root, a memory-backed {@code /tmp}, the socket
 * directory {@code /var/run/fencing-agent}, the state directory and the host's devices at {@code /host/dev} (here a
 * FIFO fed to the softdog emulator). With two jar-run peers on the same standalone config (gossip key included) it
 * reaches quorum and arms: the emulator sees the device armed and fed, every agent hears all three.
 */
class AgentImageIT {

    private static final List<String> NODES = List.of("node-1", "node-2", "node-3");
    private static final String IMAGE_NODE = "node-1";
    private static final Duration ARM = Duration.ofSeconds(120);

    private NetnsLab lab;
    private AgentCluster peers;
    private CrunContainer container;
    private FencingConsumer consumer;
    private Path scratch;

    @AfterEach
    void tearDown() throws IOException {
        if (consumer != null) {
            consumer.close();
        }
        if (lab != null) {
            lab.close();
        }
        if (container != null) {
            container.close();
        }
        if (peers != null) {
            peers.close();
        }
        if (scratch != null) {
            HostCommand.check(List.of("rm", "-rf", scratch.toString()), Duration.ofMinutes(1));
        }
    }

    @Test
    void agentImageArmsWithTwoJarRunPeersInALabNamespace() throws IOException {
        ProjectLayout layout = ProjectLayout.fromWorkingDirectory();
        String crun = CrunHost.prepare();
        OciImage image = OciImage.locate(layout, "fencing-agent");
        Path logDir = layout.logDir("agent-image");
        scratch = Files.createTempDirectory("fencing-agent-image-");
        UnpackedImage unpacked = image.unpack(scratch.resolve("image"));
        assertThat(unpacked.entrypoint()).containsExactly("/opt/java/bin/java", "@/app/jvm.options", "-jar",
                "/app/fencing-agent.jar");
        assertThat(unpacked.uid()).isZero();

        AgentSettings settings = AgentSettings.fastFence();
        lab = NetnsLab.create(NODES);
        AgentLauncher launcher = AgentLauncher.locate(layout);
        Path workDir = scratch.resolve("lab");
        peers = AgentCluster.start(lab, launcher, "workers", settings, workDir, logDir, Set.of(IMAGE_NODE));

        // the image node: host directories as the DaemonSet's hostPath volumes, the FIFO in the "host's /dev"
        Path node = workDir.resolve(IMAGE_NODE);
        Path dev = Files.createDirectories(node.resolve("dev"));
        Path run = Files.createDirectories(node.resolve("run"));
        Path state = Files.createDirectories(node.resolve("state"));
        String id = "fe2e-" + lab.runId() + "-" + IMAGE_NODE;
        LabNode labNode = lab.node(IMAGE_NODE);
        container = CrunContainer.create(id, scratch.resolve("bundle-" + IMAGE_NODE), unpacked, new CrunContainer.Spec(
                List.of("run",
                        "--config", peers.standaloneConfig().toString(),
                        "--node", IMAGE_NODE,
                        "--socket", "/var/run/fencing-agent/fencing-agent.sock",
                        "--watchdog-device", "/host/dev/watchdog",
                        "--disable-file", "/var/run/fencing-agent/disable",
                        "--state-dir", "/var/lib/fencing-agent",
                        "--metrics-port", String.valueOf(AgentNode.METRICS_PORT)),
                // the memory bounds the controller's AgentJvm gives the pod
                List.of("JAVA_TOOL_OPTIONS=" + String.join(" ", AgentLauncher.AGENT_JVM_OPTIONS)),
                Path.of("/run/netns", labNode.namespace()),
                List.of(CrunContainer.Bind.samePath(peers.standaloneConfig(), true),
                        new CrunContainer.Bind(dev, Path.of("/host/dev"), false),
                        new CrunContainer.Bind(run, Path.of("/var/run/fencing-agent"), false),
                        new CrunContainer.Bind(state, Path.of("/var/lib/fencing-agent"), false)),
                CrunContainer.DEFAULT_CAPABILITIES));

        List<String> emulator = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString()));
        emulator.addAll(AgentNode.EMULATOR_JVM);
        emulator.addAll(launcher.softdogEmulator());
        emulator.addAll(List.of("--fifo", dev.resolve("watchdog").toString(),
                "--timeout", settings.watchdogTimeout().toMillis() + "ms",
                "--reset-command", container.killCommand(),
                "--events-file", logDir.resolve("watchdog-" + IMAGE_NODE + ".jsonl").toString()));
        JsonLinesProcess watchdog = lab.start(IMAGE_NODE, "watchdog-" + IMAGE_NODE, emulator, logDir);
        watchdog.await("the emulator of " + IMAGE_NODE + " started", l -> "started".equals(l.text("event")),
                Duration.ofSeconds(30));

        long started = System.nanoTime();
        LoggedProcess crunRun = container.start("agent-" + IMAGE_NODE + "-image", logDir);
        lab.adopt(crunRun);
        consumer = FencingConsumer.start(IMAGE_NODE, run.resolve("fencing-agent.sock"));

        Awaitility.await("the image's agent armed with quorum, hearing all three").atMost(ARM)
                .pollInterval(Duration.ofMillis(500))
                .failFast("crun run exited", () -> {
                    if (crunRun.isAlive()) {
                        return false;
                    }
                    throw new IllegalStateException("crun run exited; " + crunRun.log() + ":\n"
                            + Files.readString(crunRun.log()));
                })
                .until(() -> consumer.status().filter(s -> s.getArmed() && s.getQuorumHeld() && s.getHeard() == 3)
                        .isPresent());
        long armedMillis = (System.nanoTime() - started) / 1_000_000;
        watchdog.await("the FIFO armed by the image's agent", l -> "armed".equals(l.text("event")), ARM);
        long feedsAtArm = consumer.status().orElseThrow().getFeedsTotal();
        peers.awaitAllArmed(ARM);
        for (AgentNode peer : peers.nodes()) {
            AgentStatus status = peer.status().orElseThrow();
            assertThat(status.getHeard()).as(peer.name() + " hears the image's agent too").isEqualTo(NODES.size());
            assertThat(status.getQuorumHeld()).isTrue();
        }
        Awaitility.await("the image's agent keeps feeding").atMost(Duration.ofSeconds(30))
                .until(() -> consumer.status().map(AgentStatus::getFeedsTotal).orElse(0L) > feedsAtArm);

        // it really runs from the image: the container's process is the image's java, in its own root
        assertThat(container.state()).isEqualTo("running");
        assertThat(Files.readSymbolicLink(Path.of("/proc", String.valueOf(container.pid()), "exe")))
                .isEqualTo(Path.of("/opt/java/bin/java"));
        System.out.printf("agent image: %s, armed with quorum %d ms after crun run (%s)%n", image.archive(),
                armedMillis, crun);
    }
}
