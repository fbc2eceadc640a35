package dev.fencing.e2e.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.kubetest.KubeBinaries;
import dev.fencing.kubetest.RealControlPlane;
import dev.fencing.kubetest.RealControlPlaneExtension;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kubelet stand-in ({@code tools/kube/cmd/kubelet-standin}) against a real API server with the Node authorizer
 * and NodeRestriction on, under the node's own identity: it keeps its Node Ready and its Lease renewed, hands out a
 * token bound to the agent pod on its node (accepted by a real TokenReview for audience {@code fencing-agent}) and a
 * new one when that pod is replaced, marks the pod Running, finishes a pod's deletion, ends cleanly on SIGTERM, and
 * once it is killed Kubernetes' node lifecycle controller marks its Node Unknown. Bad flags are refused.
 */
class KubeletStandinIT {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.withControllers();

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String AGENT_LABEL = "app.kubernetes.io/name";

    @TempDir
    Path dir;
    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void stopStandins() throws InterruptedException {
        for (Process p : processes) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static KubernetesClient admin() {
        return KUBE.get().adminClient();
    }

    private String createNode(String prefix) {
        String name = KUBE.get().uniqueName(prefix);
        admin().nodes().resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
        return name;
    }

    private Process standin(String node, String... extra) throws IOException {
        RealControlPlane kube = KUBE.get();
        List<String> command = new ArrayList<>(List.of(KubeBinaries.locate().resolve("kubelet-standin").toString(),
                "--kubeconfig", kube.kubeconfigFor("system:node:" + node, "system:nodes").toString(),
                "--node", node, "--internal-ip", "127.0.0.1",
                "--renew-interval", "1s", "--status-interval", "2s", "--pod-interval", "500ms"));
        command.addAll(List.of(extra));
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log(node).toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        processes.add(process);
        return process;
    }

    // kept after the run (target/e2e-logs/kubelet-standin), unlike the token files in the temporary directory
    private static Path log(String node) throws IOException {
        Path logs = ProjectLayout.fromWorkingDirectory().logDir("kubelet-standin");
        Files.createDirectories(logs);
        return logs.resolve(node + ".log");
    }

    private String logText(String node) throws IOException {
        return Files.readString(log(node), StandardCharsets.UTF_8);
    }

    private String ready(String node) {
        return ControlPlane.readiness(admin().nodes().withName(node).get());
    }

    @Test
    void keepsItsNodeReadyWithCapacityAndAddressesAndRenewsItsLease() throws IOException {
        String node = createNode("standin-ready");
        standin(node, "--cpu", "3", "--memory", "2Gi", "--pods", "50");

        Awaitility.await("Node Ready").atMost(WAIT).until(() -> "True".equals(ready(node)));
        Node stored = admin().nodes().withName(node).get();
        Map<String, Quantity> allocatable = stored.getStatus().getAllocatable();
        assertThat(allocatable.get("cpu")).isEqualTo(new Quantity("3"));
        assertThat(allocatable.get("memory")).isEqualTo(new Quantity("2Gi"));
        assertThat(allocatable.get("pods")).isEqualTo(new Quantity("50"));
        assertThat(stored.getStatus().getCapacity()).isEqualTo(allocatable);
        assertThat(stored.getStatus().getAddresses()).anySatisfy(a -> {
            assertThat(a.getType()).isEqualTo("InternalIP");
            assertThat(a.getAddress()).isEqualTo("127.0.0.1");
        });
        String readySince = stored.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType()))
                .findFirst().orElseThrow().getLastTransitionTime();

        AtomicReference<String> firstRenewal = new AtomicReference<>();
        Awaitility.await("Lease created").atMost(WAIT).until(() -> {
            Lease lease = admin().leases().inNamespace("kube-node-lease").withName(node).get();
            if (lease != null) {
                firstRenewal.set(lease.getSpec().getRenewTime().toString());
            }
            return lease != null;
        });
        Lease lease = admin().leases().inNamespace("kube-node-lease").withName(node).get();
        assertThat(lease.getSpec().getHolderIdentity()).isEqualTo(node);
        assertThat(lease.getMetadata().getOwnerReferences()).singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo(stored.getMetadata().getUid()));
        Awaitility.await("Lease renewed").atMost(WAIT).until(() -> !firstRenewal.get().equals(admin().leases()
                .inNamespace("kube-node-lease").withName(node).get().getSpec().getRenewTime().toString()));
        // heartbeats move on, the transition time stays while the node stays Ready
        Awaitility.await("a later heartbeat").atMost(WAIT).until(() -> admin().nodes().withName(node).get()
                .getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType())).findFirst()
                .map(c -> !c.getLastHeartbeatTime().equals(c.getLastTransitionTime())
                        && c.getLastTransitionTime().equals(readySince)).orElse(false));
        assertThat(logText(node)).contains("event=started", "event=node-ready", "event=lease-created");
    }

    @Test
    void writesATokenBoundToTheAgentPodOnItsNodeAndANewOneWhenThePodIsReplaced() throws Exception {
        String node = createNode("standin-token");
        String namespace = createAgentNamespace();
        Pod first = createAgentPod(namespace, node);
        // a pod of another node must not be picked up
        String otherNode = createNode("standin-other");
        createAgentPod(namespace, otherNode);
        Path token = dir.resolve("token").resolve(node);
        standin(node, "--pod-namespace", namespace, "--pod-selector", AGENT_LABEL + "=fencing-agent",
                "--token-file", token.toString());

        Awaitility.await("token file").atMost(WAIT).until(() -> Files.exists(token));
        assertThat(Files.getPosixFilePermissions(token)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        TokenReview review = review(Files.readString(token, StandardCharsets.US_ASCII));
        assertThat(review.getStatus().getAuthenticated()).isTrue();
        assertThat(review.getStatus().getUser().getUsername())
                .isEqualTo("system:serviceaccount:" + namespace + ":fencing-agent");
        Map<String, List<String>> extra = review.getStatus().getUser().getExtra();
        assertThat(extra.get("authentication.kubernetes.io/pod-name")).containsExactly(first.getMetadata().getName());
        assertThat(extra.get("authentication.kubernetes.io/pod-uid")).containsExactly(first.getMetadata().getUid());
        assertThat(extra.get("authentication.kubernetes.io/node-name")).containsExactly(node);
        Awaitility.await("pod Running and Ready").atMost(WAIT).until(() -> {
            Pod pod = admin().pods().inNamespace(namespace).withName(first.getMetadata().getName()).get();
            return "Running".equals(pod.getStatus().getPhase()) && pod.getStatus().getConditions().stream()
                    .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
        });

        // the DaemonSet would replace the pod: deleting a bound pod waits for its kubelet, which finishes it
        admin().pods().inNamespace(namespace).withName(first.getMetadata().getName()).delete();
        Awaitility.await("old pod gone").atMost(WAIT).until(() -> admin().pods().inNamespace(namespace)
                .withName(first.getMetadata().getName()).get() == null);
        Pod second = createAgentPod(namespace, node);
        Awaitility.await("token of the new pod").atMost(WAIT).until(() -> {
            TokenReview r = review(Files.readString(token, StandardCharsets.US_ASCII));
            return r.getStatus().getAuthenticated() && List.of(second.getMetadata().getUid()).equals(
                    r.getStatus().getUser().getExtra().get("authentication.kubernetes.io/pod-uid"));
        });
        assertThat(logText(node)).contains("event=token-written", "event=agent-pod-running",
                "event=agent-pod-deleted");
    }

    /** @return a new namespace holding the agents' ServiceAccount {@code fencing-agent} */
    private static String createAgentNamespace() {
        String namespace = KUBE.get().uniqueName("standin-ns");
        admin().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata()
                .build()).create();
        admin().serviceAccounts().inNamespace(namespace).resource(new ServiceAccountBuilder().withNewMetadata()
                .withName("fencing-agent").endMetadata().build()).create();
        return namespace;
    }

    // like the controller's DaemonSet pods: a projected token volume for audience fencing-agent, without which
    // NodeRestriction refuses the node a token for that audience (ServiceAccountNodeAudienceRestriction)
    private Pod createAgentPod(String namespace, String node) {
        return admin().pods().inNamespace(namespace).resource(new PodBuilder()
                .withNewMetadata().withGenerateName("fencing-agent-").withLabels(Map.of(AGENT_LABEL, "fencing-agent"))
                .endMetadata()
                .withNewSpec().withNodeName(node).withServiceAccountName("fencing-agent")
                .withAutomountServiceAccountToken(false)
                .addNewContainer().withName("agent").withImage("fencing-agent:test")
                    .addNewVolumeMount().withName("token").withMountPath("/etc/fencing-agent/token").endVolumeMount()
                .endContainer()
                .addNewVolume().withName("token").withNewProjected().addNewSource().withNewServiceAccountToken()
                    .withAudience("fencing-agent").withExpirationSeconds(3600L).withPath("token")
                .endServiceAccountToken().endSource().endProjected().endVolume()
                .endSpec().build()).create();
    }

    @Test
    void isRefusedATokenForAnAudienceItsPodDoesNotMount() throws Exception {
        String node = createNode("standin-audience");
        String namespace = createAgentNamespace();
        createAgentPod(namespace, node);
        Path token = dir.resolve("token").resolve(node);
        // a kubelet may only ask for the audiences its pods' projected volumes name; the stand-in is held to that
        standin(node, "--pod-namespace", namespace, "--pod-selector", AGENT_LABEL + "=fencing-agent",
                "--token-file", token.toString(), "--audience", "someone-else");
        Awaitility.await("refusal logged").atMost(WAIT).until(() -> logText(node).contains("event=agent-pod-failed"));
        assertThat(logText(node)).contains("not authorized to request tokens for audience");
        assertThat(token).doesNotExist();
    }

    private static TokenReview review(String token) {
        return admin().resource(new TokenReviewBuilder().withNewSpec().withToken(token.strip())
                .withAudiences("fencing-agent").endSpec().build()).create();
    }

    @Test
    void endsCleanlyOnSigtermAndOnceKilledItsNodeGoesUnknown() throws Exception {
        String node = createNode("standin-stop");
        Process graceful = standin(node);
        Awaitility.await("Node Ready").atMost(WAIT).until(() -> "True".equals(ready(node)));
        graceful.destroy();
        assertThat(graceful.waitFor(10, TimeUnit.SECONDS)).as("exited after SIGTERM").isTrue();
        assertThat(graceful.exitValue()).isZero();
        assertThat(logText(node)).contains("event=stopped");

        Process killed = standin(node);
        Awaitility.await("still Ready with a new heartbeat").atMost(WAIT).until(() -> "True".equals(ready(node)));
        killed.destroyForcibly();
        killed.waitFor(10, TimeUnit.SECONDS);
        // kube-controller-manager's node lifecycle controller: no renewal for its grace period -> Unknown
        Awaitility.await("Node Unknown").atMost(WAIT).pollInterval(Duration.ofMillis(500))
                .until(() -> "Unknown".equals(ready(node)));
        standin(node);
        Awaitility.await("Ready again after the restart").atMost(WAIT).until(() -> "True".equals(ready(node)));
    }

    @Test
    void refusesBadFlagsWithAClearMessage() throws Exception {
        String node = KUBE.get().uniqueName("standin-flags");
        assertRefused(node, "must be at least 1s and longer than --renew-interval",
                "--lease-duration", "1s");
        assertRefused(node, "--pod-namespace needs --pod-selector and --token-file", "--pod-namespace", "x");
        assertRefused(node, "--cpu wants a positive quantity", "--cpu", "lots");
        assertRefused(node, "the API server refuses tokens shorter than 10m", "--token-expiration", "1m");
    }

    private void assertRefused(String node, String message, String... flags) throws Exception {
        Process process = standin(node, flags);
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).as("exits on " + List.of(flags)).isTrue();
        assertThat(process.exitValue()).as("exit code for " + List.of(flags)).isEqualTo(2);
        assertThat(logText(node)).contains(message);
    }
}
