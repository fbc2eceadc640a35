package dev.fencing.e2e.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.image.ControllerImage;
import dev.fencing.e2e.image.CrunHost;
import dev.fencing.e2e.image.OciImage;
import dev.fencing.e2e.image.UnpackedImage;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.HostCommand;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
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
 * The controller's container image ({@code target/images/node-manager-controller.oci.tar}, built by
 * {@code scripts/images}) run by crun in the lab's control-plane namespace against the real control plane, with the
 * chart's ServiceAccount token and RBAC (default values) and with leader election as the chart runs it: it starts as
 * user 65532 from the image's entrypoint, becomes leader on the chart's Lease, and creates one agent DaemonSet
 * {@code fencing-agent-<group>} per fencing-enabled NodeGroup (two groups).
 */
class ControllerImageIT {

    private static final String GROUP = "workers";
    private static final String SECOND_GROUP = "storage";
    /** The chart's Lease name: {@code controller.leaderElection.leaseName} defaults to the release's full name. */
    private static final String LEASE = "node-manager-controller";
    /** The chart's default agent image: what scripts/images names the agent's archive. */
    private static final String AGENT_IMAGE = "ghcr.io/fencing/fencing-agent:" + OciImage.TAG;
    private static final Duration WAIT = Duration.ofSeconds(90);

    private NetnsLab lab;
    private ControlPlane controlPlane;
    private ControllerImage controller;
    private Path scratch;

    @AfterEach
    void tearDown() {
        if (controlPlane != null) {
            controlPlane.close();
        }
        if (lab != null) {
            lab.close();
        }
        if (controller != null) {
            controller.close();
        }
        if (scratch != null) {
            HostCommand.check(List.of("rm", "-rf", scratch.toString()), Duration.ofMinutes(1));
        }
    }

    @Test
    void controllerImageLeadsAndCreatesOneAgentDaemonSetPerFencingGroup() throws IOException {
        ProjectLayout layout = ProjectLayout.fromWorkingDirectory();
        String crun = CrunHost.prepare();
        OciImage image = OciImage.locate(layout, "node-manager-controller");
        scratch = Files.createTempDirectory("fencing-controller-image-");
        UnpackedImage unpacked = image.unpack(scratch.resolve("image"));
        assertThat(unpacked.uid()).isEqualTo(65532);
        assertThat(unpacked.gid()).isEqualTo(65532);
        assertThat(unpacked.entrypoint()).endsWith("dev.fencing.nodemanager.NodeManagerOperator");

        lab = NetnsLab.create(List.of("node-1", "node-2"));
        controller = new ControllerImage(unpacked, scratch.resolve("containers"), "fe2e-" + lab.runId(),
                List.of("POD_NAMESPACE=" + ControlPlane.CONTROLLER_NAMESPACE, "POD_NAME=node-manager-controller-0"));
        // the chart runs it with leader election on the chart's Lease and its default agent image; the lab's
        // default is without either
        ControllerLauncher asTheChartRunsIt = (name, namespace, args, logDir) -> {
            List<String> chartArgs = new ArrayList<>();
            for (String arg : args) {
                if ("--no-leader-election".equals(arg)) {
                    chartArgs.addAll(List.of("--leader-election", "--lease-name=" + LEASE,
                            "--agent-image=" + AGENT_IMAGE));
                } else {
                    chartArgs.add(arg);
                }
            }
            return controller.start(name, namespace, chartArgs, logDir);
        };
        long started = System.nanoTime();
        controlPlane = ControlPlane.start(lab, layout, GROUP, AgentSettings.fastFence(),
                layout.logDir("controller-image"), Set.of(), asTheChartRunsIt);
        long runningMillis = (System.nanoTime() - started) / 1_000_000;
        KubernetesClient admin = controlPlane.kube().adminClient();
        admin.resource(admin.getKubernetesSerialization().unmarshal(
                ControlPlane.nodeGroupYaml(SECOND_GROUP, AgentSettings.fastFence()), NodeGroup.class)).create();

        Awaitility.await("the image's controller holds the chart's Lease").atMost(WAIT)
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    Lease lease = admin.leases().inNamespace(ControlPlane.CONTROLLER_NAMESPACE).withName(LEASE).get();
                    return lease != null && lease.getSpec().getHolderIdentity() != null
                            && !lease.getSpec().getHolderIdentity().isBlank();
                });
        Awaitility.await("one agent DaemonSet per fencing group").atMost(WAIT).pollInterval(Duration.ofMillis(500))
                .until(() -> admin.apps().daemonSets().inNamespace(ControlPlane.CONTROLLER_NAMESPACE).list()
                        .getItems().stream().map(d -> d.getMetadata().getName()).sorted().toList(),
                        names -> names.equals(List.of("fencing-agent-" + SECOND_GROUP, "fencing-agent-" + GROUP)));
        for (String group : List.of(GROUP, SECOND_GROUP)) {
            DaemonSet daemonSet = admin.apps().daemonSets().inNamespace(ControlPlane.CONTROLLER_NAMESPACE)
                    .withName("fencing-agent-" + group).get();
            assertThat(daemonSet.getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
                    .as("the agent image of " + group).isEqualTo(AGENT_IMAGE);
        }
        assertThat(Files.readString(controlPlane.controllerLog())).contains("event=leadership_acquired");
        // what the chart's probes ask, on the probe port of the image's controller
        assertThat(controlPlane.controllerGet(ControlPlane.PROBE_PORT, "/readyz")).isEqualTo("ok\n");
        assertThat(controlPlane.controllerGet(ControlPlane.PROBE_PORT, "/healthz")).isEqualTo("ok\n");
        System.out.printf("controller image: %s, running %d ms after the control plane started (%s)%n",
                image.archive(), runningMillis, crun);
    }
}
