package dev.fencing.e2e.netns;

import dev.fencing.e2e.process.HostCommand;
import dev.fencing.e2e.process.JsonLinesProcess;
import dev.fencing.e2e.process.LoggedProcess;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A virtual LAN of nodes, each in its own network namespace, joined by veth pairs to a bridge that lives in a
 * namespace of its own; nothing is created in the host's namespace, and addresses come from 198.18.0.0/15 (RFC 2544
 * benchmarking space), so lab traffic cannot reach any real network.
 *
 * <p>Faults are nftables drop rules inside the node namespaces (partitions, one-way cuts, random loss) and signals
 * to processes (stall, crash). {@link #close()} removes everything; a shutdown hook does the same if the JVM exits
 * first, and {@link LabRuns#sweepAbandoned()} removes leftovers of runs whose JVM was killed.
 */
public final class NetnsLab implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NetnsLab.class);
    /** Every lab address lies in this range. */
    public static final String LAB_RANGE = "198.18.0.0/15";
    private static final String SUBNET_PREFIX = "198.18.0.";
    /** The subnets of a lab's networks, in order: eth0 on br0, eth1 on br1. */
    private static final List<String> NETWORK_PREFIXES = List.of(SUBNET_PREFIX, "198.19.0.");
    /** At most this many networks (bridges) per lab. */
    public static final int MAX_NETWORKS = NETWORK_PREFIXES.size();
    private static final int FIRST_HOST = 10;
    private static final int MAX_NODES = 200;
    private static final Duration IP_TIMEOUT = Duration.ofSeconds(15);
    private static final char[] ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

    private final String runId;
    private final String bridgeNamespace;
    private final Map<String, LabNode> nodes = new LinkedHashMap<>();
    private int networks = 1;
    private final Map<String, NamespaceFirewall> firewalls = new LinkedHashMap<>();
    private final List<AutoCloseable> processes = new CopyOnWriteArrayList<>();
    private final Thread shutdownHook;
    private boolean closed;

    private NetnsLab(String runId) {
        this.runId = runId;
        this.bridgeNamespace = LabRuns.PREFIX + runId + "-br";
        this.shutdownHook = new Thread(this::teardown, "netns-lab-teardown-" + runId);
    }

    /**
     * Creates the lab: sweeps abandoned labs, then builds the bridge and one namespace per node.
     *
     * @param nodeNames names of the nodes, in order; node i gets address 198.18.0.(10+i)
     * @throws IllegalStateException when not root or when {@code ip}/{@code nft} fail; nothing is left behind
     */
    public static NetnsLab create(List<String> nodeNames) {
        return create(nodeNames, 1);
    }

    /**
     * Creates a lab whose nodes are joined by {@code networks} separate bridges: network 0 is {@code eth0} on
     * {@code br0} in 198.18.0.0/24 (the node's {@link LabNode#address()}), network 1 {@code eth1} on {@code br1} in
     * 198.19.0.0/24, node i at .(10+i) on each.
     *
     * @throws IllegalStateException when not root or when {@code ip}/{@code nft} fail; nothing is left behind
     */
    public static NetnsLab create(List<String> nodeNames, int networks) {
        if (networks < 1 || networks > MAX_NETWORKS) {
            throw new IllegalArgumentException("a lab has 1.." + MAX_NETWORKS + " networks, got " + networks);
        }
        if (nodeNames.isEmpty() || nodeNames.size() > MAX_NODES) {
            throw new IllegalArgumentException("a lab has 1.." + MAX_NODES + " nodes, got " + nodeNames.size());
        }
        if (nodeNames.stream().distinct().count() != nodeNames.size()) {
            throw new IllegalArgumentException("node names must be unique: " + nodeNames);
        }
        requireRoot();
        LabRuns.sweepAbandoned();
        NetnsLab lab = new NetnsLab(newRunId());
        lab.networks = networks;
        LabRuns.claim(lab.runId);
        Runtime.getRuntime().addShutdownHook(lab.shutdownHook);
        long started = System.nanoTime();
        try {
            lab.build(nodeNames);
        } catch (RuntimeException e) {
            lab.close();
            throw e;
        }
        LOG.info("event=lab-created run={} nodes={} millis={}", lab.runId, nodeNames.size(),
                (System.nanoTime() - started) / 1_000_000);
        return lab;
    }

    private static void requireRoot() {
        String uid = HostCommand.check(List.of("id", "-u"), IP_TIMEOUT).strip();
        if (!"0".equals(uid)) {
            throw new IllegalStateException("the network-namespace harness needs root (ip netns, nft); running as uid "
                    + uid + ". Run the e2e suite as root, e.g. sudo ./mvnw -pl e2e verify");
        }
    }

    private static String newRunId() {
        SecureRandom random = new SecureRandom();
        StringBuilder id = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            id.append(ID_ALPHABET[random.nextInt(ID_ALPHABET.length)]);
        }
        return id.toString();
    }

    private void build(List<String> nodeNames) {
        ip("netns", "add", bridgeNamespace);
        ipIn(bridgeNamespace, "link", "set", "lo", "up");
        ipIn(bridgeNamespace, "link", "add", "br0", "type", "bridge");
        ipIn(bridgeNamespace, "link", "set", "br0", "up");
        for (int net = 1; net < networks; net++) {
            ipIn(bridgeNamespace, "link", "add", "br" + net, "type", "bridge");
            ipIn(bridgeNamespace, "link", "set", "br" + net, "up");
        }
        for (int i = 0; i < nodeNames.size(); i++) {
            LabNode node = new LabNode(nodeNames.get(i), i, LabRuns.PREFIX + runId + "-" + i,
                    SUBNET_PREFIX + (FIRST_HOST + i));
            String port = "n" + i;
            ip("netns", "add", node.namespace());
            nodes.put(node.name(), node);
            ipIn(bridgeNamespace, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns",
                    node.namespace());
            ipIn(bridgeNamespace, "link", "set", port, "master", "br0");
            ipIn(bridgeNamespace, "link", "set", port, "up");
            ipIn(node.namespace(), "link", "set", "lo", "up");
            ipIn(node.namespace(), "addr", "add", node.address() + "/24", "dev", "eth0");
            ipIn(node.namespace(), "link", "set", "eth0", "up");
            for (int net = 1; net < networks; net++) {
                String bridgePort = "n" + i + "x" + net;
                String nic = "eth" + net;
                ipIn(bridgeNamespace, "link", "add", bridgePort, "type", "veth", "peer", "name", nic, "netns",
                        node.namespace());
                ipIn(bridgeNamespace, "link", "set", bridgePort, "master", "br" + net);
                ipIn(bridgeNamespace, "link", "set", bridgePort, "up");
                ipIn(node.namespace(), "addr", "add", address(node, net) + "/24", "dev", nic);
                ipIn(node.namespace(), "link", "set", nic, "up");
            }
            NamespaceFirewall firewall = new NamespaceFirewall(node.namespace());
            firewall.install();
            firewalls.put(node.name(), firewall);
        }
    }

    private static void ip(String... args) {
        List<String> command = new ArrayList<>();
        command.add("ip");
        command.addAll(List.of(args));
        HostCommand.check(command, IP_TIMEOUT);
    }

    private static void ipIn(String namespace, String... args) {
        List<String> command = new ArrayList<>(List.of("ip", "-n", namespace));
        command.addAll(List.of(args));
        HostCommand.check(command, IP_TIMEOUT);
    }

    /** @return this lab's run id; its namespaces are {@code fe2e-<runId>-*} */
    public String runId() {
        return runId;
    }

    /** @return the nodes in creation order */
    public List<LabNode> nodes() {
        return List.copyOf(nodes.values());
    }

    /** @return the node called {@code name} */
    public LabNode node(String name) {
        LabNode node = nodes.get(name);
        if (node == null) {
            throw new IllegalArgumentException("no lab node " + name + "; nodes are " + nodes.keySet());
        }
        return node;
    }

    /** @return every namespace of this lab, bridge included */
    public List<String> namespaces() {
        List<String> all = new ArrayList<>();
        all.add(bridgeNamespace);
        nodes.values().forEach(n -> all.add(n.namespace()));
        return all;
    }

    /**
     * Starts a JSON-lines process inside {@code node}'s namespace; it is killed at teardown.
     *
     * @param processName unique name for logs ({@code logDir/<processName>.err})
     */
    public JsonLinesProcess start(String node, String processName, List<String> command, Path logDir) {
        return owned(JsonLinesProcess.start(processName, inNamespace(node, command), logDir));
    }

    /** Starts a process with plain-text output inside {@code node}'s namespace; it is killed at teardown. */
    public LoggedProcess startLogged(String node, String processName, List<String> command, Path logDir) {
        return owned(LoggedProcess.start(processName, inNamespace(node, command), logDir));
    }

    private List<String> inNamespace(String node, List<String> command) {
        List<String> full = new ArrayList<>(node(node).execPrefix());
        full.addAll(command);
        return full;
    }

    private <P extends AutoCloseable> P owned(P process) {
        processes.add(process);
        return process;
    }

    /** Registers a process started elsewhere (with {@link LabNode#execPrefix()}) so teardown kills it. */
    public void adopt(AutoCloseable process) {
        processes.add(process);
    }

    // ---- faults -------------------------------------------------------------------------------------------------

    /** @return how many networks (bridges) join the nodes */
    public int networks() {
        return networks;
    }

    /** @return network {@code network}'s subnet, e.g. {@code 198.19.0.0/24} for network 1 */
    public String networkCidr(int network) {
        checkNetwork(network);
        return NETWORK_PREFIXES.get(network) + "0/24";
    }

    /** @return {@code node}'s address on network {@code network} (network 0: {@link LabNode#address()}) */
    public String address(String node, int network) {
        checkNetwork(network);
        return address(node(node), network);
    }

    private static String address(LabNode node, int network) {
        return NETWORK_PREFIXES.get(network) + (FIRST_HOST + node.index());
    }

    private void checkNetwork(int network) {
        if (network < 0 || network >= networks) {
            throw new IllegalArgumentException("this lab has networks 0.." + (networks - 1) + ", not " + network);
        }
    }

    /**
     * Partitions one network only: no packet from one side's addresses on {@code network} reaches the other side;
     * the other networks are untouched.
     */
    public Fault partitionOn(int network, Collection<String> sideA, Collection<String> sideB) {
        checkNetwork(network);
        Set<String> a = new TreeSet<>(sideA);
        Set<String> b = new TreeSet<>(sideB);
        if (a.isEmpty() || b.isEmpty() || a.stream().anyMatch(b::contains)) {
            throw new IllegalArgumentException("a partition needs two non-empty disjoint sides: " + a + " | " + b);
        }
        List<Runnable> undo = new ArrayList<>();
        a.forEach(n -> undo.add(dropInput(firewall(n), b, List.of(network))));
        b.forEach(n -> undo.add(dropInput(firewall(n), a, List.of(network))));
        return fault("partition on network " + network + " " + a + " | " + b, undo);
    }

    /** Cuts {@code node} off from every other node on {@code network} only, both directions. */
    public Fault isolateOn(int network, String node) {
        return partitionOn(network, Set.of(node), others(node));
    }

    /**
     * Partitions the lab: no packet crosses between {@code sideA} and {@code sideB}, in either direction, on any of
     * its networks. Nodes in neither set keep talking to both.
     */
    public Fault partition(Collection<String> sideA, Collection<String> sideB) {
        Set<String> a = new TreeSet<>(sideA);
        Set<String> b = new TreeSet<>(sideB);
        if (a.isEmpty() || b.isEmpty() || a.stream().anyMatch(b::contains)) {
            throw new IllegalArgumentException("a partition needs two non-empty disjoint sides: " + a + " | " + b);
        }
        List<Runnable> undo = new ArrayList<>();
        a.forEach(n -> undo.add(dropInput(n, b)));
        b.forEach(n -> undo.add(dropInput(n, a)));
        return fault("partition " + a + " | " + b, undo);
    }

    /** Cuts {@code node} off from every other node, both directions. */
    public Fault isolate(String node) {
        return partition(Set.of(node), others(node));
    }

    /** {@code node} can still receive but nothing it sends arrives anywhere in the lab. */
    public Fault cutOutbound(String node) {
        List<Runnable> undo = new ArrayList<>();
        others(node).forEach(other -> undo.add(dropInput(other, Set.of(node))));
        return fault("one-way cut: " + node + " cannot send", undo);
    }

    /** {@code node} can still send but receives nothing from the other lab nodes. */
    public Fault cutInbound(String node) {
        return fault("one-way cut: " + node + " cannot receive", List.of(dropInput(node, others(node))));
    }

    /** Drops only the packets from {@code from} to {@code to}; the reverse direction is untouched. */
    public Fault dropLink(String from, String to) {
        return fault("one-way cut " + from + " -> " + to, List.of(dropInput(to, Set.of(from))));
    }

    /**
     * Random loss: each packet from another lab node into {@code node} is dropped with probability
     * {@code percent}/100 ({@code numgen random mod 100 < percent}).
     */
    public Fault loss(String node, int percent) {
        if (percent < 1 || percent > 99) {
            throw new IllegalArgumentException("loss percent must be 1..99, got " + percent);
        }
        NamespaceFirewall firewall = firewall(node);
        long handle = firewall.add("input", "ip saddr " + LAB_RANGE + " numgen random mod 100 < " + percent
                + " counter drop");
        return fault(percent + "% loss into " + node, List.of(() -> firewall.delete("input", handle)));
    }

    /** {@code percent}% loss on every link direction of the lab. */
    public Fault lossEverywhere(int percent) {
        List<Fault> all = nodes.keySet().stream().map(n -> loss(n, percent)).toList();
        return fault(percent + "% loss on every link", all.stream().<Runnable>map(f -> f::heal).toList());
    }

    /**
     * Counts the bytes (IP headers included) that processes in {@code node}'s namespace send from local
     * {@code port}, UDP and TCP together. Counting rules never drop; {@link #healAll()} removes them too.
     *
     * @return a reader of the running total
     */
    public LongSupplier countBytesSentFrom(String node, int port) {
        NamespaceFirewall firewall = firewall(node);
        long udp = firewall.add("output", "udp sport " + port + " counter");
        long tcp = firewall.add("output", "tcp sport " + port + " counter");
        return () -> firewall.counterBytes("output", udp) + firewall.counterBytes("output", tcp);
    }

    /** Removes every fault rule from every node. */
    public void healAll() {
        firewalls.values().forEach(NamespaceFirewall::flush);
        LOG.info("event=heal-all run={}", runId);
    }

    /** @return the nftables rules currently inside {@code node}, for diagnostics */
    public String rules(String node) {
        return firewall(node).ruleset();
    }

    /**
     * Crashes a node: SIGKILL to every process in its namespace.
     *
     * @return how many processes were killed
     */
    public int crash(String node) {
        int killed = LabRuns.killProcessesIn(node(node).namespace());
        LOG.info("event=crash run={} node={} killed={}", runId, node, killed);
        return killed;
    }

    /**
     * Drops every packet from {@code fromNodes} on the input of another namespace plugged into this lab's bridge
     * (the control plane's), exactly like the lab's own faults: loss on the wire, healed by the returned fault.
     * {@link #healAll()} does not touch that namespace.
     */
    public Fault dropInto(NamespaceFirewall firewall, String description, Collection<String> fromNodes) {
        return fault(description, List.of(dropInput(firewall, fromNodes)));
    }

    private Runnable dropInput(String node, Set<String> fromNodes) {
        return dropInput(firewall(node), fromNodes);
    }

    private Runnable dropInput(NamespaceFirewall firewall, Collection<String> fromNodes) {
        List<Integer> all = new ArrayList<>();
        for (int net = 0; net < networks; net++) {
            all.add(net);
        }
        return dropInput(firewall, fromNodes, all);
    }

    /** Drops what {@code fromNodes} send from their addresses on {@code onNetworks}. */
    private Runnable dropInput(NamespaceFirewall firewall, Collection<String> fromNodes, List<Integer> onNetworks) {
        String addresses = fromNodes.stream().flatMap(n -> onNetworks.stream().map(net -> address(node(n), net)))
                .sorted().collect(Collectors.joining(", "));
        long handle = firewall.add("input", "ip saddr { " + addresses + " } counter drop");
        return () -> firewall.delete("input", handle);
    }

    private Set<String> others(String node) {
        node(node);
        Set<String> others = new TreeSet<>(nodes.keySet());
        others.remove(node);
        return others;
    }

    private NamespaceFirewall firewall(String node) {
        node(node);
        return firewalls.get(node);
    }

    private Fault fault(String description, List<Runnable> undo) {
        LOG.info("event=fault-injected run={} fault=\"{}\"", runId, description);
        return new Fault() {
            private boolean healed;

            @Override
            public String description() {
                return description;
            }

            @Override
            public synchronized void heal() {
                if (!healed) {
                    healed = true;
                    undo.forEach(Runnable::run);
                    LOG.info("event=fault-healed run={} fault=\"{}\"", runId, description);
                }
            }
        };
    }

    // ---- teardown -----------------------------------------------------------------------------------------------

    /** Kills every process of the lab and deletes its namespaces; safe to call more than once. */
    @Override
    public void close() {
        teardown();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            LOG.debug("event=shutdown-in-progress run={}", runId);
        }
    }

    private synchronized void teardown() {
        if (closed) {
            return;
        }
        closed = true;
        // newest first: an agent dies before the watchdog emulator it writes to, so its log ends without a
        // teardown-made "broken pipe"
        List<AutoCloseable> newestFirst = new ArrayList<>(processes);
        Collections.reverse(newestFirst);
        for (AutoCloseable process : newestFirst) {
            try {
                process.close();
            } catch (Exception e) {
                LOG.warn("event=process-close-failed run={} reason=\"{}\"", runId, e.getMessage());
            }
        }
        List<String> all = new ArrayList<>(nodes.values().stream().map(LabNode::namespace).toList());
        all.add(bridgeNamespace);
        all.addAll(LabRuns.namespacesOf(runId));
        for (String ns : new TreeSet<>(all)) {
            LabRuns.removeNamespace(ns);
        }
        LabRuns.release(runId);
        LOG.info("event=lab-removed run={}", runId);
    }
}
