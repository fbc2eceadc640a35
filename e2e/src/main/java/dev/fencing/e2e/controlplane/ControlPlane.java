package dev.fencing.e2e.controlplane;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.e2e.agent.AgentConfigSource;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.agent.NodeCompanion;
import dev.fencing.e2e.netns.Fault;
import dev.fencing.e2e.netns.LabNode;
import dev.fencing.e2e.netns.LabRuns;
import dev.fencing.e2e.netns.NamespaceFirewall;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.HostCommand;
import dev.fencing.e2e.process.LoggedProcess;
import dev.fencing.e2e.process.Pause;
import dev.fencing.kubetest.KubeBinaries;
import dev.fencing.kubetest.RealControlPlane;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kubernetes side of a lab: a "control-plane" network namespace on the lab's bridge ({@value #ADDRESS}) running
 * a real control plane ({@link RealControlPlane}: etcd, kube-apiserver on {@value #ADDRESS}:6443, kube-controller-
 * manager and kube-scheduler) and the real node-manager controller jar against it, under the chart's ServiceAccount
 * and RBAC ({@link ChartIdentity}, a real token, no admin rights). Seeded with the NodeGroup CRD, one NodeGroup and
 * one Node per lab node (label {@code node.deckhouse.io/group}, InternalIP = the lab address).
 *
 * <p>Every lab node runs a kubelet stand-in ({@link #kubelet()}, {@code kubelet-standin} from
 * {@code scripts/kube-binaries}) with the node's own identity: it renews the node's Lease, keeps the Node Ready,
 * and once the DaemonSet controller has made the agent pod and the scheduler has bound it, requests the pod's token
 * (TokenRequest, audience {@code fencing-agent}) into the file the agent reads. The node's watchdog reset kills it
 * with the agent, so Kubernetes' node lifecycle controller sees the node go Unknown exactly as in a cluster. Agents
 * dial {@link #controllerAddress()} over TLS (a lab CA made with openssl, {@link LabPki}); the controller checks
 * their tokens with a real TokenReview.
 *
 * <p>The test JVM edits the API with the admin client ({@link #kube()}). {@link #close()} stops the controller and
 * the control plane and deletes the namespace; the lab's own teardown (and its sweeper) would remove them too,
 * since the namespace carries the lab's run id.
 */
public final class ControlPlane implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ControlPlane.class);
    /** Inside the lab's /24, below the nodes' 198.18.0.10+. */
    public static final String ADDRESS = "198.18.0.2";
    public static final int API_PORT = RealControlPlane.NAMESPACED_API_PORT;
    public static final int GRPC_PORT = 9650;
    /** The controller's health port inside the control-plane namespace: /healthz, /metrics, /debug/groups/. */
    public static final int HEALTH_PORT = 8080;
    /** The controller's probe port inside the control-plane namespace: /healthz and /readyz for a kubelet. */
    public static final int PROBE_PORT = 8081;
    public static final String GROUP_LABEL = "node.deckhouse.io/group";
    /** Any value disarms the node's agent (ARCHITECTURE §3.2). */
    public static final String MAINTENANCE_ANNOTATION = "node-manager.deckhouse.io/fencing-disable";
    /** The controller's taint on a node that fenced itself (node-recovery-controller). */
    public static final String OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service";
    /** Kubernetes' node lifecycle controller's taint on a node whose Ready condition is Unknown. */
    public static final String UNREACHABLE_TAINT = "node.kubernetes.io/unreachable";
    public static final String CONTROLLER_NAMESPACE = "fencing-system";
    /** The name the controller's certificate is issued for and agents verify (the chart's Service name). */
    public static final String SERVER_NAME = "node-manager-controller." + CONTROLLER_NAMESPACE + ".svc";
    /**
     * kube-controller-manager's node lifecycle settings for the lab: a node whose kubelet stopped is Unknown
     * {@value} after its last renewal (production: 40-50 s), checked every second. Well above the stand-in's 2 s
     * renewals on a loaded 2-core machine, well below {@code safeToAssumeFencedDelay} of the lab's fast policy.
     */
    public static final String NODE_MONITOR_GRACE = "8s";
    private static final String NODE_MONITOR_PERIOD = "1s";
    private static final String KUBELET_RENEW = "2s";
    private static final String KUBELET_STATUS = "4s";
    private static final String KUBELET_LEASE_DURATION = "10s";
    private static final String AGENT_SELECTOR = "app.kubernetes.io/name=fencing-agent";
    private static final int GOSSIP_PORT = 7946;
    private static final Duration IP_TIMEOUT = Duration.ofSeconds(15);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    private static final List<String> JVM = List.of("-Xms32m", "-Xmx256m", "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1", "-Xss512k");
    private static final String CRD_RESOURCE = "/META-INF/fabric8/nodegroups.deckhouse.io-v1.yml";
    /** The power-fencing CRDs (fencing.deckhouse.io/v1alpha1), from the fencing-api jar like the NodeGroup's. */
    private static final List<String> FENCING_CRD_RESOURCES = List.of(
            "/META-INF/fabric8/nodefencingconfigs.fencing.deckhouse.io-v1.yml",
            "/META-INF/fabric8/nodefencings.fencing.deckhouse.io-v1.yml");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final NetnsLab lab;
    private final String namespace;
    private final ControllerLauncher launcher;
    private final ControllerOptions options;
    private final Path logDir;
    private final String group;
    private final NamespaceFirewall firewall;
    private final Path secrets;
    private final Map<String, Path> nodeKubeconfigs = new LinkedHashMap<>();
    private final Map<String, Integer> kubeletStarts = new LinkedHashMap<>();
    private RealControlPlane kube;
    private ChartIdentity identity;
    private Path controllerKubeconfig;
    private Path standin;
    private LabPki pki;
    private LoggedProcess controller;
    private int controllerStarts;
    private boolean closed;

    private ControlPlane(NetnsLab lab, ControllerLauncher launcher, String group, Path logDir,
                         ControllerOptions options) {
        this.lab = lab;
        this.options = options;
        this.namespace = LabRuns.PREFIX + lab.runId() + "-cp";
        this.firewall = new NamespaceFirewall(namespace);
        this.launcher = launcher;
        this.group = group;
        this.logDir = logDir;
        try {
            this.secrets = Files.createTempDirectory("fencing-lab-" + lab.runId() + "-");
        } catch (IOException e) {
            throw new IllegalStateException("cannot create the lab's certificate and token directory: "
                    + e.getMessage(), e);
        }
    }

    /**
     * Builds the namespace, starts the control plane, installs the CRD and the chart's ServiceAccounts and RBAC,
     * creates {@code group} (policy from {@code settings}) and one Node per lab node (those in {@code outsideGroup}
     * without the group label: they join later through {@link #addToGroup}), then starts the controller and waits
     * until it runs. The nodes' kubelets start with their agents ({@link #kubelet()}).
     *
     * @throws IllegalStateException when a step fails; whatever was started is stopped again
     */
    public static ControlPlane start(NetnsLab lab, ProjectLayout layout, String group, AgentSettings settings,
                                     Path logDir, Set<String> outsideGroup) {
        return start(lab, layout, group, settings, logDir, outsideGroup, jar(ControllerJar.locate(layout)));
    }

    /**
     * Like {@link #start(NetnsLab, ProjectLayout, String, AgentSettings, Path, Set)}, with the controller started by
     * {@code launcher} (e.g. from its container image) instead of {@code java -jar}.
     */
    public static ControlPlane start(NetnsLab lab, ProjectLayout layout, String group, AgentSettings settings,
                                     Path logDir, Set<String> outsideGroup, ControllerLauncher launcher) {
        return start(lab, layout, group, settings, logDir, outsideGroup, launcher, ControllerOptions.defaults());
    }

    /**
     * Like {@link #start(NetnsLab, ProjectLayout, String, AgentSettings, Path, Set, ControllerLauncher)}, with the
     * controller run with {@code options} (e.g. power fencing: its CRDs and RBAC are installed first).
     */
    public static ControlPlane start(NetnsLab lab, ProjectLayout layout, String group, AgentSettings settings,
                                     Path logDir, Set<String> outsideGroup, ControllerLauncher launcher,
                                     ControllerOptions options) {
        ControlPlane plane = new ControlPlane(lab, launcher, group, logDir, options);
        long started = System.nanoTime();
        try {
            plane.standin = locateStandin();
            plane.createNamespace();
            plane.kube = RealControlPlane.builder()
                    .name("lab-" + lab.runId())
                    .networkNamespace(plane.namespace, ADDRESS)
                    .controllerManager(true)
                    .scheduler(true)
                    .controllerManagerArgs("--node-monitor-period=" + NODE_MONITOR_PERIOD,
                            "--node-monitor-grace-period=" + NODE_MONITOR_GRACE)
                    .logDir(logDir.resolve("kube"))
                    .start();
            plane.installCrd(CRD_RESOURCE);
            if (options.powerFencing()) {
                for (String crd : FENCING_CRD_RESOURCES) {
                    plane.installCrd(crd);
                }
            }
            plane.installIdentity(layout.repoRoot().resolve("helm").resolve("fencing"));
            plane.admin().resource(plane.admin().getKubernetesSerialization()
                    .unmarshal(nodeGroupYaml(group, settings), NodeGroup.class)).create();
            for (LabNode node : lab.nodes()) {
                plane.admin().nodes().resource(plane.admin().getKubernetesSerialization().unmarshal(
                        nodeYaml(node, outsideGroup.contains(node.name()) ? null : group), Node.class)).create();
            }
            plane.pki = LabPki.create(plane.secrets.resolve("pki"), SERVER_NAME, ADDRESS);
            plane.startController();
        } catch (RuntimeException e) {
            plane.close();
            throw e;
        }
        LOG.info("event=control-plane-started run={} group={} nodes={} millis={}", lab.runId(), group,
                lab.nodes().size(), (System.nanoTime() - started) / 1_000_000);
        return plane;
    }

    private static Path locateStandin() {
        Path binary = KubeBinaries.locate().resolve("kubelet-standin");
        if (!Files.isExecutable(binary)) {
            throw new IllegalStateException(binary + " is missing; scripts/kube-binaries builds it from "
                    + "tools/kube/cmd/kubelet-standin next to the Kubernetes binaries");
        }
        return binary;
    }

    private KubernetesClient admin() {
        return kube.adminClient();
    }

    private void installCrd(String resource) {
        try (InputStream crd = ControlPlane.class.getResourceAsStream(resource)) {
            if (crd == null) {
                throw new IllegalStateException(resource + " is not on the classpath; it comes from the "
                        + "fencing-api jar");
            }
            CustomResourceDefinition definition = admin().getKubernetesSerialization()
                    .unmarshal(crd, CustomResourceDefinition.class);
            admin().apiextensions().v1().customResourceDefinitions().resource(definition).create();
            admin().apiextensions().v1().customResourceDefinitions().withName(definition.getMetadata().getName())
                    .waitUntilCondition(c -> c != null && c.getStatus() != null
                            && c.getStatus().getConditions() != null && c.getStatus().getConditions().stream()
                                    .anyMatch(k -> "Established".equals(k.getType()) && "True".equals(k.getStatus())),
                            START_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + resource + ": " + e.getMessage(), e);
        }
    }

    private void installIdentity(Path chart) {
        Namespace ns = new NamespaceBuilder().withNewMetadata().withName(CONTROLLER_NAMESPACE).endMetadata().build();
        admin().namespaces().resource(ns).create();
        identity = ChartIdentity.render(chart, CONTROLLER_NAMESPACE,
                admin().getKubernetesVersion().getGitVersion(), options.chartValues());
        identity.install(admin());
        // a real token of the chart's ServiceAccount, as the controller's pod would mount it
        controllerKubeconfig = kube.kubeconfigForServiceAccount(CONTROLLER_NAMESPACE, identity.controllerAccount());
        LOG.info("event=chart-identity-installed objects={} controller_sa={} agent_sa={}", identity.objects().size(),
                identity.controllerAccount(), identity.agentAccount());
    }

    /** @return {@code host:port} of the controller's AgentControl server, for {@code run --controller} */
    public String controllerAddress() {
        return ADDRESS + ":" + GRPC_PORT;
    }

    /**
     * @return how agents reach the controller: its address, the lab CA and server name, and one token file per node
     *     (written by the node's kubelet stand-in)
     */
    public AgentConfigSource agentSource() {
        return AgentConfigSource.controller(controllerAddress(),
                List.of("--controller-ca", pki.ca().toString(), "--controller-server-name", SERVER_NAME),
                tokenDir());
    }

    private Path tokenDir() {
        return secrets.resolve("tokens");
    }

    /**
     * @return the control plane's network namespace (a name under {@code /run/netns}), where the controller runs;
     *     a BMC simulator on its loopback is what the controller's fence agents reach at {@code 127.0.0.1}
     */
    public String namespace() {
        return namespace;
    }

    /** @return the NodeGroup the lab's nodes belong to */
    public String group() {
        return group;
    }

    /** @return the real control plane (admin client, URLs, logs) */
    public RealControlPlane kube() {
        return kube;
    }

    // ---- the kubelets -------------------------------------------------------------------------------------------

    /**
     * @return the kubelet stand-in of every lab node: started in the node's namespace with the node's identity
     *     ({@code system:node:<name>}), ready once the agent pod's token is in the node's token file
     */
    public NodeCompanion kubelet() {
        return new NodeCompanion() {
            @Override
            public LoggedProcess start(LabNode node) {
                Path kubeconfig = nodeKubeconfigs.computeIfAbsent(node.name(),
                        n -> kube.kubeconfigFor("system:node:" + n, "system:nodes"));
                List<String> command = List.of(standin.toString(),
                        "--kubeconfig", kubeconfig.toString(),
                        "--node", node.name(),
                        "--internal-ip", node.address(),
                        "--renew-interval", KUBELET_RENEW,
                        "--status-interval", KUBELET_STATUS,
                        "--lease-duration", KUBELET_LEASE_DURATION,
                        "--pod-namespace", CONTROLLER_NAMESPACE,
                        "--pod-selector", AGENT_SELECTOR,
                        "--token-file", tokenDir().resolve(node.name()).toString());
                return lab.startLogged(node.name(), "kubelet-" + node.name() + "-boot"
                        + kubeletStarts.merge(node.name(), 1, Integer::sum), command,
                        logDir);
            }

            @Override
            public void awaitReady(LabNode node, LoggedProcess kubelet, Duration timeout) {
                Map<String, String> labels = node(node.name()).getMetadata().getLabels();
                if (labels == null || !group.equals(labels.get(GROUP_LABEL))) {
                    // outside the group there is no agent pod, so no token yet: the agent retries until
                    // addToGroup lets the DaemonSet make one and the kubelet writes its token
                    LOG.info("event=kubelet-no-token-expected node={} reason=outside-group", node.name());
                    return;
                }
                Path token = tokenDir().resolve(node.name());
                long deadline = System.nanoTime() + timeout.toNanos();
                while (!Files.exists(token)) {
                    if (!kubelet.isAlive()) {
                        throw new IllegalStateException(node.name() + "'s kubelet stand-in exited; its log "
                                + kubelet.log());
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("no agent token for " + node.name() + " within " + timeout
                                + " (DaemonSet, scheduler, TokenRequest); kubelet log " + kubelet.log()
                                + ", control plane logs " + kube.logDir());
                    }
                    Pause.sleep(Duration.ofMillis(200));
                }
            }
        };
    }

    // ---- the namespace ------------------------------------------------------------------------------------------

    private void createNamespace() {
        // the lab names its bridge namespace fe2e-<runId>-br (NetnsLab); we plug one more port into its br0
        String bridge = LabRuns.PREFIX + lab.runId() + "-br";
        HostCommand.check(List.of("ip", "netns", "add", namespace), IP_TIMEOUT);
        ipIn(bridge, "link", "add", "cp", "type", "veth", "peer", "name", "eth0", "netns", namespace);
        ipIn(bridge, "link", "set", "cp", "master", "br0");
        ipIn(bridge, "link", "set", "cp", "up");
        ipIn(namespace, "link", "set", "lo", "up");
        ipIn(namespace, "addr", "add", ADDRESS + "/24", "dev", "eth0");
        ipIn(namespace, "link", "set", "eth0", "up");
        firewall.install();
    }

    private static void ipIn(String ns, String... args) {
        List<String> command = new ArrayList<>(List.of("ip", "-n", ns));
        command.addAll(List.of(args));
        HostCommand.check(command, IP_TIMEOUT);
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    // ---- edits --------------------------------------------------------------------------------------------------

    private static String mergePatch(String field, String key, String value) {
        ObjectNode entries = JSON.createObjectNode();
        if (value == null) {
            entries.putNull(key);
        } else {
            entries.put(key, value);
        }
        ObjectNode patch = JSON.createObjectNode();
        patch.putObject("metadata").set(field, entries);
        return patch.toString();
    }

    private void patchNode(String node, String patch) {
        admin().nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
    }

    /** Sets (or with a null value removes) an annotation on a Node. */
    public void annotateNode(String node, String key, String value) {
        patchNode(node, mergePatch("annotations", key, value));
        LOG.info("event=node-annotated node={} key={} value={}", node, key, value);
    }

    /** Sets (or with a null value removes) an annotation on the lab's NodeGroup. */
    public void annotateNodeGroup(String key, String value) {
        admin().resources(NodeGroup.class).withName(group).patch(PatchContext.of(PatchType.JSON_MERGE),
                mergePatch("annotations", key, value));
        LOG.info("event=nodegroup-annotated group={} key={} value={}", group, key, value);
    }

    /** Starts a maintenance window on {@code node}: the controller tells its agent to disarm. */
    public void startMaintenance(String node, String reason) {
        annotateNode(node, MAINTENANCE_ANNOTATION, reason);
    }

    /** Ends the maintenance window on {@code node}. */
    public void endMaintenance(String node) {
        annotateNode(node, MAINTENANCE_ANNOTATION, null);
    }

    /** Puts {@code node} into the group (its group label is set): it joins the expected set of every agent. */
    public void addToGroup(String node) {
        patchNode(node, mergePatch("labels", GROUP_LABEL, group));
        LOG.info("event=node-added-to-group node={} group={}", node, group);
    }

    /** Removes {@code node} from the group (its group label goes): it leaves the expected set and disarms. */
    public void removeFromGroup(String node) {
        patchNode(node, mergePatch("labels", GROUP_LABEL, null));
        LOG.info("event=node-removed-from-group node={} group={}", node, group);
    }

    // ---- what the API server shows ------------------------------------------------------------------------------

    /** @return the stored NodeGroup as JSON (its status is written by the controller) */
    public JsonNode nodeGroup() {
        NodeGroup stored = admin().resources(NodeGroup.class).withName(group).get();
        try {
            return stored == null ? JSON.nullNode()
                    : JSON.readTree(admin().getKubernetesSerialization().asJson(stored));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read NodeGroup " + group + " as JSON: " + e.getMessage(), e);
        }
    }

    /** @return the nodes in the NodeGroup's {@code status.fencedNodes}, in status order */
    public List<String> fencedNodes() {
        List<String> names = new ArrayList<>();
        nodeGroup().path("status").path("fencedNodes").forEach(n -> names.add(n.path("name").asText()));
        return names;
    }

    /** @return the Node as the API server stores it */
    public Node node(String name) {
        return Objects.requireNonNull(admin().nodes().withName(name).get(), "no Node " + name);
    }

    /** @return the status of the Node's Ready condition: True, False, Unknown, or Missing */
    public String readiness(String name) {
        return readiness(node(name));
    }

    /** @return the status of {@code node}'s Ready condition: True, False, Unknown, or Missing */
    public static String readiness(Node node) {
        List<NodeCondition> conditions = node.getStatus() == null ? List.of()
                : Objects.requireNonNullElse(node.getStatus().getConditions(), List.of());
        return conditions.stream().filter(c -> "Ready".equals(c.getType())).map(NodeCondition::getStatus)
                .findFirst().orElse("Missing");
    }

    /** @return the keys of the Node's taints */
    public Set<String> taints(String name) {
        return taintKeys(node(name));
    }

    /** @return the keys of {@code node}'s taints */
    public static Set<String> taintKeys(Node node) {
        Set<String> keys = new TreeSet<>();
        if (node.getSpec() != null && node.getSpec().getTaints() != null) {
            node.getSpec().getTaints().stream().map(Taint::getKey).forEach(keys::add);
        }
        return keys;
    }

    /** @return every lab Node as the API server stores it, by name */
    public Map<String, Node> nodes() {
        Map<String, Node> nodes = new LinkedHashMap<>();
        for (LabNode node : lab.nodes()) {
            Node stored = admin().nodes().withName(node.name()).get();
            if (stored != null) {
                nodes.put(node.name(), stored);
            }
        }
        return nodes;
    }

    /**
     * Makes the controller (and the API server) unreachable from {@code nodes}: their packets are dropped on the
     * control plane's input, so agents there lose their stream, cannot get tie-breaks and run on cached config, and
     * their kubelets cannot renew (Kubernetes sees those Nodes go Unknown, as in a cluster).
     */
    public Fault unreachableFrom(Collection<String> nodes) {
        return lab.dropInto(firewall, "control plane unreachable from " + new TreeSet<>(nodes), nodes);
    }

    // ---- the controller -----------------------------------------------------------------------------------------

    /** @return the default launcher: {@code java -jar <jar>} under {@code ip netns exec} */
    public static ControllerLauncher jar(Path controllerJar) {
        return (processName, namespace, args, logDir) -> {
            List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", namespace, java()));
            command.addAll(JVM);
            command.addAll(List.of("-jar", controllerJar.toString()));
            command.addAll(args);
            return LoggedProcess.start(processName, command, logDir);
        };
    }

    /** Starts the controller process (again, after {@link #stopController()}) and waits until it runs. */
    public void startController() {
        if (controller != null && controller.isAlive()) {
            throw new IllegalStateException("the controller already runs (pid " + controller.pid() + ")");
        }
        controllerStarts++;
        List<String> args = new ArrayList<>(List.of(
                // the API server at its in-namespace https URL, the CA and the chart ServiceAccount's token;
                // agents' APIReachable probe gets the same URL and CA (GET https://198.18.0.2:6443/readyz)
                "--kubeconfig", controllerKubeconfig.toString(),
                "--no-leader-election",
                "--namespace", CONTROLLER_NAMESPACE,
                "--grpc-port", String.valueOf(GRPC_PORT),
                "--health-port", String.valueOf(HEALTH_PORT),
                "--probe-port", String.valueOf(PROBE_PORT),
                "--gossip-port", String.valueOf(GOSSIP_PORT),
                "--agent-controller-address", controllerAddress(),
                "--agent-service-account", identity.agentAccount(),
                "--tls-cert", pki.cert().toString(),
                "--tls-key", pki.key().toString(),
                "--tls-ca", pki.ca().toString(),
                "--agent-ca-secret", "fencing-lab-ca",
                // the arbiter grants nothing for this long after start: short, so tie-breaks answer in the lab
                "--max-tie-lease", "5s",
                "--status-interval", "2s",
                "--report-stale-after", "10s"));
        args.addAll(options.args());
        controller = launcher.start("controller-start" + controllerStarts, namespace, args, logDir);
        lab.adopt(controller);
        awaitControllerRunning();
    }

    private void awaitControllerRunning() {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            String log = readLog(controller.log());
            if (log.contains("event=running")) {
                LOG.info("event=controller-running pid={} start={}", controller.pid(), controllerStarts);
                return;
            }
            if (!controller.isAlive()) {
                throw new IllegalStateException("the controller exited before running; its log "
                        + controller.log() + " ends:\n" + tail(log, 20));
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the controller did not log event=running within " + START_TIMEOUT
                        + "; log " + controller.log());
            }
            Pause.sleep(Duration.ofMillis(200));
        }
    }

    /**
     * GET {@code path} from the controller's health port, from inside the control-plane namespace (the test JVM has
     * no route into the lab); {@code socat} sends the request, bounded by a 10 s wait.
     *
     * @return the response body of a 200
     */
    public String controllerGet(String path) {
        return controllerGet(HEALTH_PORT, path);
    }

    /** GET {@code path} from {@code port} of the controller, as {@link #controllerGet(String)}. */
    public String controllerGet(int port, String path) {
        try {
            Process p = new ProcessBuilder("ip", "netns", "exec", namespace, "socat", "-T", "5", "-",
                    "TCP:127.0.0.1:" + port).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            try (var in = p.getOutputStream()) {
                in.write(("GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
            }
            byte[] response = p.getInputStream().readAllBytes();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("GET " + path + " on the controller did not finish within 10 s");
            }
            String text = new String(response, StandardCharsets.UTF_8);
            int body = text.indexOf("\r\n\r\n");
            if (!text.startsWith("HTTP/1.1 200") || body < 0) {
                throw new IllegalStateException("GET " + path + " on the controller answered: "
                        + text.lines().findFirst().orElse("nothing"));
            }
            return text.substring(body + 4);
        } catch (IOException e) {
            throw new IllegalStateException("cannot run socat in " + namespace + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while asking the controller for " + path, e);
        }
    }

    /** Stops the controller (SIGTERM, then SIGKILL): agents keep running on their cached config. */
    public void stopController() {
        if (controller == null || !controller.isAlive()) {
            return;
        }
        int code = controller.terminate(Duration.ofSeconds(15));
        LOG.info("event=controller-stopped start={} exit={}", controllerStarts, code);
    }

    /** @return true while the controller process runs */
    public boolean controllerRunning() {
        return controller != null && controller.isAlive();
    }

    /** @return the current controller process's log file */
    public Path controllerLog() {
        return controller.log();
    }

    // ---- manifests ----------------------------------------------------------------------------------------------

    /** @return the NodeGroup with {@code spec.fencing} built from the lab's agent settings */
    static String nodeGroupYaml(String group, AgentSettings settings) {
        StringBuilder yaml = new StringBuilder();
        yaml.append("apiVersion: deckhouse.io/v1\nkind: NodeGroup\nmetadata:\n  name: ").append(group).append('\n');
        yaml.append("spec:\n  nodeType: Static\n  fencing:\n    mode: Watchdog\n");
        yaml.append("    watchdog: {timeout: ").append(settings.watchdogTimeout().toSeconds()).append("s}\n");
        yaml.append("    quorumLossAction: ").append(settings.quorumLossAction()).append('\n');
        yaml.append("    profile: ").append(settings.profile()).append('\n');
        yaml.append("    quorum: {size: Auto, tieBreakers: [").append(String.join(", ", settings.tieBreakers()))
                .append("]}\n");
        if (!settings.timings().isEmpty()) {
            yaml.append("    timings:\n");
            settings.timings().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e ->
                    yaml.append("      ").append(e.getKey()).append(": ").append(e.getValue()).append('\n'));
        }
        return yaml.toString();
    }

    /**
     * @return a Node of {@code group} (none: no group label) whose InternalIP is the lab node's address; its kubelet
     *     stand-in reports it Ready
     */
    static String nodeYaml(LabNode node, String group) {
        String labels = group == null ? "  labels: {}\n" : "  labels:\n    " + GROUP_LABEL + ": " + group + "\n";
        return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + node.name() + "\n" + labels
                + "status:\n  addresses:\n  - {type: InternalIP, address: \"" + node.address()
                + "\"}\n  - {type: Hostname, address: " + node.name() + "}\n";
    }

    // ---- teardown -----------------------------------------------------------------------------------------------

    /** Stops the controller and the control plane and deletes the namespace; safe to call more than once. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (controller != null && controller.isAlive()) {
            controller.close();
        }
        if (kube != null) {
            kube.close();
        }
        HostCommand.run(List.of("ip", "netns", "del", namespace), IP_TIMEOUT);
        HostCommand.run(List.of("rm", "-rf", "--", secrets.toString()), IP_TIMEOUT);
        LOG.info("event=control-plane-removed run={} netns={}", lab.runId(), namespace);
    }

    private static String readLog(Path log) {
        try {
            return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "";
        }
    }

    private static String tail(String text, int lines) {
        String[] all = text.split("\n");
        return String.join("\n", List.of(all).subList(Math.max(0, all.length - lines), all.length));
    }
}
