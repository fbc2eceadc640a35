package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.helm.InstallGuide.Phase;
import dev.fencing.helm.InstallGuide.Transcript;
import dev.fencing.kubetest.KubeBinaries;
import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.dependent.AgentDaemonSetFactory;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plain-cluster path of {@code docs/install.md}, executed: its marked shell blocks run with bash, exactly as
 * written, with the real {@code helm} and {@code kubectl} CLIs that {@code scripts/kube-binaries} builds (first on
 * PATH) and the admin kubeconfig of a real control plane. Three Node objects named as in the guide stand for the
 * nodes (no kubelet: the agent pods are created and bound, never started). Between the setup and the verify
 * commands the real controller runs in the test JVM as the installed Deployment would run it (its arguments, the
 * generated TLS Secret, a token of the chart's ServiceAccount). The transcript is printed and written to
 * {@code target/install-guide-transcript.txt}.
 */
class InstallGuideRealClusterTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.withControllers();

    /** The namespace the guide uses throughout. */
    private static final String NS = "d8-fencing";
    /** The example NodeGroup ({@code api/examples/nodegroup-fencing.yaml}) and the nodes the guide labels. */
    private static final String GROUP = "workers";
    private static final List<String> NODES = List.of("worker-1", "worker-2", "worker-3");
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path tmp;

    private static KubernetesClient admin() {
        return KUBE.get().adminClient();
    }

    @Test
    void theGuidesPlainClusterCommandsInstallTheChartAndTheControllerRunsOneAgentDaemonSetPerFencingGroup()
            throws Exception {
        Path guide = InstallGuide.file();
        Path repo = guide.getParent().getParent();
        String markdown = Files.readString(guide);
        assertThat(markdown).as("the guide's namespace").contains("NS=" + NS + "\n");
        String script = InstallGuide.script(InstallGuide.blocks(markdown), "plain-cluster");

        Path bin = KubeBinaries.locate();
        for (String cli : List.of("helm", "kubectl")) {
            assertThat(bin.resolve(cli)).as(cli + " from scripts/kube-binaries (tools/helm, tools/kube)")
                    .isExecutable();
        }
        Path home = Files.createDirectories(tmp.resolve("home"));
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", bin + ":/usr/local/bin:/usr/bin:/bin");
        env.put("HOME", home.toString());
        env.put("KUBECONFIG", KUBE.get().adminKubeconfig().toString());
        env.put("LANG", "C.UTF-8");

        for (String node : NODES) {
            admin().nodes().resource(node(node)).create();
        }
        ChartController[] controller = new ChartController[1];
        List<String> versions = new ArrayList<>();
        try {
            versions.addAll(InstallGuide.run("""
                    set -euo pipefail
                    printf '$ helm version --short\\n'; helm version --short
                    printf '$ kubectl version --client\\n'; kubectl version --client
                    """, repo, env, WAIT, phase -> { }).lines());
            assertThat(versions).anyMatch(l -> l.startsWith("v3.22.0")).contains("Client Version: v1.37.2");

            Transcript transcript = InstallGuide.run(script, repo, env, Duration.ofMinutes(5), phase -> {
                if (phase == Phase.VERIFY) {
                    controller[0] = startControllerAndAwaitItsDaemonSet();
                } else if (phase == Phase.UNINSTALL) {
                    // until helm uninstall removes its RBAC, the chart's grants cover everything the controller did
                    assertThat(controller[0].responses().forbidden()).as("answers that were no success: "
                            + controller[0].responses().failed()).isEmpty();
                }
            });
            write(versions, transcript);

            assertThat(transcript.exitCode()).as("bash's exit code; the transcript is above").isZero();
            assertThat(transcript.text())
                    .contains("$ helm install fencing helm/fencing -n \"$NS\" --set crds.install=true")
                    .contains("deployment.apps/node-manager-controller created (server dry run)")
                    .doesNotContain("configured (server dry run)")
                    .contains("STATUS: deployed")
                    .contains("nodegroup.deckhouse.io/workers created")
                    .containsPattern("(?m)^fencing-agent-workers +3 +3 +0 ")
                    .contains("release \"fencing\" uninstalled");
            // the transcript's DaemonSets are the controller's: one for the one fencing group, gone after its
            // spec.fencing was removed (the uninstall commands)
            assertThat(admin().apps().daemonSets().inNamespace(NS).list().getItems()).isEmpty();
        } finally {
            if (controller[0] != null) {
                controller[0].close();
            }
            admin().resources(NodeGroup.class).withName(GROUP).delete();
            NODES.forEach(n -> admin().nodes().withName(n).delete());
            admin().namespaces().withName(NS).delete();
            ChartRelease.deleteCrd(admin());
        }
    }

    /**
     * What the Deployment's pods do on a real cluster: the controller with the installed command line and
     * identity; returns once it created the agent DaemonSet of the one fencing group, scheduled on its three nodes.
     */
    private ChartController startControllerAndAwaitItsDaemonSet() {
        try {
            // the guide's helm install created the CRD (see ChartRelease.awaitOwnerReferencesAdmitted)
            ChartRelease.awaitOwnerReferencesAdmitted(KUBE.get());
            ChartController controller = ChartController.of(KUBE.get(), NS, DefaultValuesRenderTest.NAME,
                    tmp.resolve("tls"));
            controller.start();
            DaemonSet ds = await().atMost(WAIT).until(() -> admin().apps().daemonSets().inNamespace(NS)
                    .withName(AgentDaemonSetFactory.name(GROUP)).get(), d -> d != null && d.getStatus() != null
                    && d.getStatus().getDesiredNumberScheduled() == NODES.size()
                    && d.getStatus().getCurrentNumberScheduled() == NODES.size());
            assertThat(ds.getMetadata().getOwnerReferences()).singleElement()
                    .satisfies(o -> assertThat(o.getName()).isEqualTo(GROUP));
            assertThat(admin().apps().daemonSets().inNamespace(NS).list().getItems())
                    .extracting(d -> d.getMetadata().getName()).containsExactly(AgentDaemonSetFactory.name(GROUP));
            await().atMost(WAIT).until(() -> admin().resources(NodeGroup.class).withName(GROUP).get().getStatus(),
                    s -> s != null && s.getExpected() != null && s.getExpected() == NODES.size());
            return controller;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // The guide's transcript, for the closing note and docs/install.md's "Commands as run".
    private static void write(List<String> versions, Transcript transcript) throws IOException {
        List<String> all = new ArrayList<>(versions);
        all.addAll(transcript.lines());
        Files.write(Path.of("target", "install-guide-transcript.txt"), all);
    }

    // A Node as a kubelet registers it, without the group label: the guide's first command sets it.
    private static Node node(String name) {
        Map<String, Quantity> room = Map.of("cpu", new Quantity("4"), "memory", new Quantity("8Gi"),
                "pods", new Quantity("110"));
        return new NodeBuilder()
                .withNewMetadata().withName(name).addToLabels("kubernetes.io/hostname", name).endMetadata()
                .withNewStatus().withCapacity(room).withAllocatable(room)
                .addNewAddress().withType("InternalIP").withAddress("198.18.1." + (10 + NODES.indexOf(name)))
                .endAddress()
                .addNewAddress().withType("Hostname").withAddress(name).endAddress()
                .endStatus()
                .build();
    }
}
