package dev.fencing.e2e.controlplane;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.netns.LabNode;
import dev.fencing.e2e.netns.Fault;
import dev.fencing.e2e.netns.LabRuns;
import dev.fencing.e2e.netns.NamespaceFirewall;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.process.HostCommand;
import dev.fencing.e2e.process.JsonLinesProcess;
import dev.fencing.e2e.process.LoggedProcess;
import dev.fencing.e2e.process.ObservedLine;
import dev.fencing.e2e.process.Pause;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kubernetes side of a lab: a "control-plane" network namespace on the lab's bridge ({@value #ADDRESS}) running
 * the fabric8 CRUD mock API server ({@link MockApiServer}) and the real node-manager controller jar against it,
 * seeded with one NodeGroup and one Node per lab node (label {@code node.deckhouse.io/group}, InternalIP = the lab
 * address). Agents in the node namespaces dial {@link #controllerAddress()} over TLS (a lab CA made with openssl,
 * {@link LabPki}) and prove their node with a token the mock API server issued for their agent pod and answers
 * TokenReviews for ({@link LabTokenAuthority}): the controller runs with TLS and agent authentication on, as in a
 * cluster.
 *
 * <p>The test JVM cannot reach the namespace's sockets, so it edits the API through the mock server's stdin
 * ({@link ApiCommands}). {@link #close()} stops both processes and deletes the namespace; the lab's own teardown
 * (and its sweeper) would remove them too, since the namespace carries the lab's run id.
 */
public final class ControlPlane implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ControlPlane.class);
    /** Inside the lab's /24, below the nodes' 198.18.0.10+. */
    public static final String ADDRESS = "198.18.0.2";
    public static final int API_PORT = 6443;
    public static final int GRPC_PORT = 9650;
    public static final String GROUP_LABEL = "node.deckhouse.io/group";
    /** Any value disarms the node's agent (ARCHITECTURE §3.2). */
    public static final String MAINTENANCE_ANNOTATION = "node-manager.deckhouse.io/fencing-disable";
    private static final String CONTROLLER_NAMESPACE = "fencing-system";
    /** The name the controller's certificate is issued for and agents verify (the chart's Service name). */
    public static final String SERVER_NAME = "node-manager-controller." + CONTROLLER_NAMESPACE + ".svc";
    private static final int GOSSIP_PORT = 7946;
    private static final Duration IP_TIMEOUT = Duration.ofSeconds(15);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);
    private static final List<String> JVM = List.of("-Xms32m", "-Xmx256m", "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1", "-Xss512k");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final NetnsLab lab;
    private final String namespace;
    private final Path controllerJar;
    private final Path logDir;
    private final String group;
    private final AtomicLong commandIds = new AtomicLong();
    private final NamespaceFirewall firewall;
    private final Path secrets;
    private LabPki pki;
    private JsonLinesProcess apiServer;
    private LoggedProcess controller;
    private int controllerStarts;
    private boolean closed;

    private ControlPlane(NetnsLab lab, Path controllerJar, String group, Path logDir) {
        this.lab = lab;
        this.namespace = LabRuns.PREFIX + lab.runId() + "-cp";
        this.firewall = new NamespaceFirewall(namespace);
        this.controllerJar = controllerJar;
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
     * Builds the namespace, starts the API server, seeds {@code group} (policy from {@code settings}) and one Node
     * per lab node, then starts the controller and waits until it runs.
     *
     * @throws IllegalStateException when a step fails; whatever was started is stopped again
     */
    public static ControlPlane start(NetnsLab lab, Path controllerJar, String group, AgentSettings settings,
                                     Path logDir) {
        return start(lab, controllerJar, group, settings, logDir, Set.of());
    }

    /**
     * Like {@link #start(NetnsLab, Path, String, AgentSettings, Path)}, but the Nodes named in {@code outsideGroup}
     * are seeded without the group label (a node that joins the group later, through {@link #addToGroup}).
     */
    public static ControlPlane start(NetnsLab lab, Path controllerJar, String group, AgentSettings settings,
                                     Path logDir, Set<String> outsideGroup) {
        ControlPlane plane = new ControlPlane(lab, controllerJar, group, logDir);
        long started = System.nanoTime();
        try {
            plane.createNamespace();
            plane.startApiServer();
            plane.command(create(nodeGroupYaml(group, settings)));
            for (LabNode node : lab.nodes()) {
                plane.command(create(nodeYaml(node, outsideGroup.contains(node.name()) ? null : group)));
            }
            plane.pki = LabPki.create(plane.secrets.resolve("pki"), SERVER_NAME, ADDRESS);
            plane.startController();
            plane.issueAgentTokens();
        } catch (RuntimeException e) {
            plane.close();
            throw e;
        }
        LOG.info("event=control-plane-started run={} group={} nodes={} millis={}", lab.runId(), group,
                lab.nodes().size(), (System.nanoTime() - started) / 1_000_000);
        return plane;
    }

    /** @return {@code host:port} of the controller's AgentControl server, for {@code run --controller} */
    public String controllerAddress() {
        return ADDRESS + ":" + GRPC_PORT;
    }

    /**
     * @return how agents reach the controller: its address, the lab CA and server name, and one token file per node
     */
    public dev.fencing.e2e.agent.AgentConfigSource agentSource() {
        return dev.fencing.e2e.agent.AgentConfigSource.controller(controllerAddress(),
                List.of("--controller-ca", pki.ca().toString(), "--controller-server-name", SERVER_NAME),
                secrets.resolve("tokens"));
    }

    // What the DaemonSet controller and the kubelet do: once the controller has created the group's agent DaemonSet,
    // a pod per node and its projected token in the node's token file.
    private void issueAgentTokens() {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        for (LabNode node : lab.nodes()) {
            while (true) {
                ObjectNode issue = JSON.createObjectNode();
                issue.put("op", "agent-token");
                issue.put("namespace", CONTROLLER_NAMESPACE);
                issue.put("group", group);
                issue.put("node", node.name());
                issue.put("file", secrets.resolve("tokens").resolve(node.name()).toString());
                try {
                    command(issue);
                    break;
                } catch (IllegalStateException e) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("no agent token for " + node.name() + " within "
                                + START_TIMEOUT + ": " + e.getMessage(), e);
                    }
                    Pause.sleep(Duration.ofMillis(200));
                }
            }
        }
        LOG.info("event=agent-tokens-issued nodes={} dir={}", lab.nodes().size(), secrets.resolve("tokens"));
    }

    /** @return the NodeGroup the lab's nodes belong to */
    public String group() {
        return group;
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

    private List<String> inNamespace(List<String> command) {
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", namespace));
        full.addAll(command);
        return full;
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    // ---- the API server -----------------------------------------------------------------------------------------

    private void startApiServer() {
        List<String> command = new ArrayList<>(List.of(java()));
        command.addAll(JVM);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), MockApiServer.class.getName(),
                "--address", ADDRESS, "--port", String.valueOf(API_PORT)));
        apiServer = JsonLinesProcess.start("mock-api-server", inNamespace(command), logDir);
        lab.adopt(apiServer);
        apiServer.await("mock API server ready", l -> "ready".equals(l.text("event")), START_TIMEOUT);
    }

    private JsonNode command(ObjectNode command) {
        long id = commandIds.incrementAndGet();
        command.put("id", id);
        long since = System.nanoTime();
        apiServer.writeLine(command.toString());
        ObservedLine answer = apiServer.await("answer to " + command.path("op").asText() + " #" + id,
                l -> l.receivedNanos() >= since && l.json().path("id").asLong(-1) == id, COMMAND_TIMEOUT);
        if (!"done".equals(answer.text("event"))) {
            throw new IllegalStateException("mock API server refused " + command.path("op").asText() + ": "
                    + answer.text("reason"));
        }
        return answer.json();
    }

    private static ObjectNode create(String manifest) {
        ObjectNode command = JSON.createObjectNode();
        command.put("op", "create");
        command.put("manifest", manifest);
        return command;
    }

    private ObjectNode edit(String op, String kind, String name, String key, String value) {
        ObjectNode command = JSON.createObjectNode();
        command.put("op", op);
        command.put("kind", kind);
        command.put("name", name);
        command.put("key", key);
        command.put("value", value);
        return command;
    }

    /** Sets (or with a null value removes) an annotation on a Node. */
    public void annotateNode(String node, String key, String value) {
        command(edit("annotate", "Node", node, key, value));
        LOG.info("event=node-annotated node={} key={} value={}", node, key, value);
    }

    /** Sets (or with a null value removes) an annotation on the lab's NodeGroup. */
    public void annotateNodeGroup(String key, String value) {
        command(edit("annotate", "NodeGroup", group, key, value));
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
        command(edit("label", "Node", node, GROUP_LABEL, group));
        LOG.info("event=node-added-to-group node={} group={}", node, group);
    }

    /** Removes {@code node} from the group (its group label goes): it leaves the expected set and disarms. */
    public void removeFromGroup(String node) {
        command(edit("label", "Node", node, GROUP_LABEL, null));
        LOG.info("event=node-removed-from-group node={} group={}", node, group);
    }

    /** @return the stored NodeGroup (its status is written by the controller) */
    public JsonNode nodeGroup() {
        ObjectNode command = JSON.createObjectNode();
        command.put("op", "get");
        command.put("kind", "NodeGroup");
        command.put("name", group);
        return command(command).path("object");
    }

    /**
     * Makes the controller (and the API server) unreachable from {@code nodes}: their packets are dropped on the
     * control plane's input, so agents there lose their stream, cannot get tie-breaks and run on cached config.
     */
    public Fault unreachableFrom(Collection<String> nodes) {
        return lab.dropInto(firewall, "control plane unreachable from " + new TreeSet<>(nodes), nodes);
    }

    // ---- the controller -----------------------------------------------------------------------------------------

    /** Starts the controller process (again, after {@link #stopController()}) and waits until it runs. */
    public void startController() {
        if (controller != null && controller.isAlive()) {
            throw new IllegalStateException("the controller already runs (pid " + controller.pid() + ")");
        }
        controllerStarts++;
        List<String> command = new ArrayList<>(List.of(java()));
        command.addAll(JVM);
        command.addAll(List.of("-jar", controllerJar.toString(),
                "--master", "http://" + ADDRESS + ":" + API_PORT,
                "--no-leader-election",
                // the CRUD mock cannot apply (server-side apply is the production default)
                "--no-server-side-apply",
                "--namespace", CONTROLLER_NAMESPACE,
                "--grpc-port", String.valueOf(GRPC_PORT),
                "--health-port", "-1",
                "--gossip-port", String.valueOf(GOSSIP_PORT),
                "--agent-controller-address", controllerAddress(),
                "--tls-cert", pki.cert().toString(),
                "--tls-key", pki.key().toString(),
                "--tls-ca", pki.ca().toString(),
                "--agent-ca-secret", "fencing-lab-ca",
                // the arbiter grants nothing for this long after start: short, so tie-breaks answer in the lab
                "--max-tie-lease", "5s",
                "--status-interval", "2s",
                "--report-stale-after", "10s"));
        controller = LoggedProcess.start("controller-start" + controllerStarts, inNamespace(command), logDir);
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

    /** @return a Ready Node of {@code group} (none: no group label) whose InternalIP is the lab node's address */
    static String nodeYaml(LabNode node, String group) {
        String labels = group == null ? "  labels: {}\n" : "  labels:\n    " + GROUP_LABEL + ": " + group + "\n";
        return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + node.name() + "\n" + labels
                + "status:\n  addresses:\n  - {type: InternalIP, address: \"" + node.address()
                + "\"}\n  - {type: Hostname, address: " + node.name() + "}\n  conditions:\n"
                + "  - {type: Ready, status: \"True\"}\n";
    }

    // ---- teardown -----------------------------------------------------------------------------------------------

    /** Stops the controller and the API server and deletes the namespace; safe to call more than once. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (controller != null && controller.isAlive()) {
            controller.close();
        }
        if (apiServer != null) {
            apiServer.close();
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
