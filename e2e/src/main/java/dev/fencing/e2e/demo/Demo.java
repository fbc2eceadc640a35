package dev.fencing.e2e.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentNode;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.agent.ConsumedEvent;
import dev.fencing.e2e.controlplane.ControlPlane;
import dev.fencing.e2e.controlplane.ControlPlaneLab;
import dev.fencing.e2e.controlplane.KubeNodeWatch;
import dev.fencing.e2e.netns.Fault;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.ObservedLine;
import dev.fencing.e2e.process.Pause;
import dev.fencing.logging.LogFormat;
import dev.fencing.logging.LogLevels;
import dev.fencing.logging.LogSetup;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.DisarmReason;
import dev.fencing.proto.fencing.v1.Timings;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * {@code scripts/demo}: five nodes in network namespaces, each with a kubelet stand-in, the node-manager controller
 * on a real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler), emulated
 * watchdogs, and a short story told on the terminal with a live table of every node's state, the agents' and the API
 * server's (Node Ready, taints, the NodeGroup's fenced nodes) — normal operation, a 3+2 partition in which the
 * minority fences itself and Kubernetes sees it, the heal and the reboot of the reset nodes, and a maintenance window
 * via the disable file. Everything it creates is removed on exit, also on Ctrl-C or failure.
 * Prints the measured timings at the end.
 */
public final class Demo {

    private static final String GROUP = "workers";
    private static final List<String> NODES = List.of("node-1", "node-2", "node-3", "node-4", "node-5");
    private static final List<String> MAJORITY = NODES.subList(0, 3);
    private static final List<String> MINORITY = NODES.subList(3, 5);
    private static final String MAINTAINED = "node-2";
    /** Second-scale timings so the story fits in a few minutes (production uses the profile's), a 10 s watchdog. */
    private static final AgentSettings SETTINGS = new AgentSettings(Duration.ofSeconds(10), "Fence",
            List.of("ControlPlane"), AgentSettings.fastFence().timings());
    private static final Duration ARM = Duration.ofSeconds(150);
    private static final Duration SLACK = Duration.ofSeconds(15);
    private static final Duration POLL = Duration.ofMillis(200);

    private final PrintStream out;
    private final ProjectLayout layout;
    private final DemoTimings timings = new DemoTimings();
    private ControlPlaneLab controlPlaneLab;
    private AgentCluster agents;
    private LiveTable table;
    private KubeNodeWatch kube;
    /** Set by the shutdown hook (Ctrl-C): the main thread's errors from then on are the teardown's doing. */
    private volatile boolean interrupted;

    private Demo(PrintStream out, ProjectLayout layout) {
        this.out = out;
        this.layout = layout;
    }

    public static void main(String[] args) throws IOException {
        ProjectLayout layout = ProjectLayout.fromWorkingDirectory();
        Path logs = layout.logDir("demo");
        Files.createDirectories(logs);
        // the harness logs key=value lines; the terminal is for the story, the file for whoever digs deeper
        LogSetup.configure(LogLevels.INFO, LogFormat.TEXT, Map.of(), logs.resolve("harness.log"));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        Demo demo = new Demo(out, layout);
        Thread cleanup = new Thread(() -> {
            demo.interrupted = true;
            if (demo.table != null) {
                demo.table.close();
            }
            out.println();
            out.println("interrupted: cleaning up");
            demo.cleanUp();
        }, "demo-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        long start = System.nanoTime();
        int exit = 0;
        try {
            demo.run(logs, System.console() != null);
        } catch (RuntimeException e) {
            exit = 1;
            if (!demo.interrupted) {
                out.println();
                out.println("demo FAILED: " + e.getMessage());
                out.println("logs: " + logs);
            }
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException shutdownInProgress) {
                // Ctrl-C arrived: the hook is already cleaning up
            }
            demo.cleanUp();
            out.printf("demo finished in %.0f s%s%n", (System.nanoTime() - start) / 1e9,
                    exit == 0 ? "" : " (failed)");
        }
        System.exit(exit);
    }

    private void run(Path logs, boolean terminal) {
        say("""
                ==> fencing demo: quorum fencing for a Kubernetes NodeGroup, on one machine
                    5 nodes, each in its own network namespace (198.18.0.11-15) with a fencing agent and an emulated
                    watchdog (a "reset" kills that node's agent and its kubelet stand-in); a real Kubernetes control
                    plane (etcd, kube-apiserver, controller-manager, scheduler) and the node-manager controller in a
                    control-plane namespace (198.18.0.2). The DaemonSet's pods get their tokens from the kubelets;
                    agents get everything else from the controller. Logs: %s""".formatted(logs));
        controlPlaneLab = ControlPlaneLab.start(NODES, GROUP, SETTINGS, layout, "demo");
        agents = controlPlaneLab.agents();
        say("    control plane up: NodeGroup '" + GROUP + "' (watchdog " + SETTINGS.watchdogTimeout().toSeconds()
                + " s, Fence) and 5 Nodes created, a kubelet stand-in on each; controller at "
                + controlPlaneLab.controlPlane().controllerAddress() + "; agents starting");
        kube = KubeNodeWatch.start(controlPlaneLab.controlPlane());
        table = new LiveTable(agents, controlPlaneLab.controlPlane(), out, terminal);
        table.start();

        normalOperation();
        Fault partition = partition();
        heal(partition);
        maintenance();

        table.close();
        timings.print(out);
    }

    // ---- chapters -----------------------------------------------------------------------------------------------

    private void normalOperation() {
        say("\n==> 1. Normal operation: every agent gets its group from the controller, confirms round trips with a "
                + "majority, arms its watchdog and feeds it.");
        long armed = agents.awaitAllArmed(ARM);
        Timings t = agents.node("node-1").status().orElseThrow().getTimings();
        timings.policy(seconds(t.getTStop()), seconds(t.getWatchdogTimeout()), seconds(t.getArmingDelay()));
        timings.record("all 5 agents configured and armed", armed);
        say(String.format("    all 5 armed after %.1f s; T_stop = %.2f s (a cut-off node stops feeding within it), "
                + "watchdog timeout = %.0f s", armed / 1000.0, seconds(t.getTStop()), seconds(t.getWatchdogTimeout())));
        Pause.sleep(Duration.ofSeconds(4));
        say("    " + controllerView());
    }

    private Fault partition() {
        say("\n==> 2. Partition 3+2: nftables drops every packet between {node-1,2,3} and {node-4,5}.");
        say("    The majority keeps quorum and keeps feeding; the minority cannot confirm a majority, stops feeding "
                + "within T_stop, and its watchdogs reset it.");
        long cut = System.nanoTime();
        Fault fault = controlPlaneLab.lab().partition(MAJORITY, MINORITY);
        Duration bound = Duration.ofMillis(timings.boundMillis()).plus(SLACK);
        for (String node : MINORITY) {
            AgentNode agent = agents.node(node);
            ObservedLine reset = awaitValue(node + " reset by its watchdog",
                    () -> agent.watchdogEvents("reset", cut).stream().findFirst(), bound);
            long lastFeed = agent.watchdogEvents("feed", 0).stream().mapToLong(ObservedLine::receivedNanos)
                    .filter(n -> n <= reset.receivedNanos()).max().orElse(cut);
            timings.record("partition -> " + node + " stopped feeding (last feed)", millis(lastFeed - cut));
            timings.record("partition -> " + node + " reset by its watchdog", millis(reset.receivedNanos() - cut));
        }
        for (String minority : MINORITY) {
            timings.record("partition -> LEFT of " + minority + " at every majority consumer",
                    lastAtMajority("LEFT of " + minority, cut, e -> e.isLiveLeftOf(minority), bound));
        }
        long afterResets = System.nanoTime();
        Pause.sleep(Duration.ofSeconds(3));
        for (String node : MAJORITY) {
            AgentNode agent = agents.node(node);
            boolean feeding = !agent.watchdogEvents("feed", afterResets).isEmpty();
            boolean reset = !agent.watchdogEvents("reset", cut).isEmpty();
            if (!feeding || reset) {
                throw new IllegalStateException(node + " of the majority " + (reset ? "was reset" : "stopped feeding")
                        + " during the partition; that is a bug: see " + agent.agent().log());
            }
        }
        say("    the minority fenced itself; node-1,2,3 kept quorum, kept feeding, and their consumers (what Cilium "
                + "would be) saw LEFT for node-4 and node-5.");
        say("    " + HeardMatrix.render(controlPlaneLab.controlPlane().controllerGet("/debug/groups/" + GROUP)));
        say("    Kubernetes: the reset nodes' kubelets died with them, so the node lifecycle controller marks their "
                + "Nodes Unknown; once that holds and safe-to-assume-fenced has passed, the controller records them "
                + "fenced and takes one (--max-out-of-service 1) out of service so its workloads can move.");
        Duration kubeBound = Duration.ofSeconds(90);
        for (String node : MINORITY) {
            KubeNodeWatch.Snapshot unknown = kube.await("Node " + node + " Unknown", cut,
                    look -> "Unknown".equals(look.ready().get(node)), kubeBound);
            timings.record("partition -> Node " + node + " Unknown (node lifecycle controller)",
                    millis(unknown.nanos() - cut));
            KubeNodeWatch.Snapshot fenced = kube.await(node + " in status.fencedNodes", cut,
                    look -> look.fenced().contains(node), kubeBound);
            timings.record("partition -> " + node + " in NodeGroup status.fencedNodes", millis(fenced.nanos() - cut));
        }
        KubeNodeWatch.Snapshot tainted = kube.await("an out-of-service taint", cut, look -> MINORITY.stream()
                .anyMatch(n -> look.tainted(n, ControlPlane.OUT_OF_SERVICE_TAINT)), kubeBound);
        timings.record("partition -> out-of-service taint on a fenced node", millis(tainted.nanos() - cut));
        say("    " + controllerView());
        return fault;
    }

    private void heal(Fault partition) {
        say("\n==> 3. Heal: the network comes back and node-4, node-5 \"reboot\" (their agents start again).");
        say("    They fetch their config from the controller, rejoin the gossip, and arm again only after holding "
                + "quorum for the arming delay.");
        long heal = System.nanoTime();
        partition.heal();
        MINORITY.forEach(n -> agents.node(n).boot());
        for (String node : MINORITY) {
            timings.record("heal -> JOIN of " + node + " at every majority consumer",
                    lastAtMajority("JOIN of " + node, heal, e -> e.isJoinOf(node), ARM));
            agents.node(node).awaitStatus("re-armed", s -> s.getArmed() && s.getQuorumHeld(), ARM);
            timings.record("heal -> " + node + " re-armed", millis(System.nanoTime() - heal));
        }
        KubeNodeWatch.Snapshot recovered = kube.await("node-4 and node-5 Ready, untainted, not fenced", heal,
                look -> MINORITY.stream().allMatch(n -> look.isReady(n)
                        && !look.tainted(n, ControlPlane.OUT_OF_SERVICE_TAINT)) && look.fenced().isEmpty(), ARM);
        timings.record("heal -> both Nodes Ready, out-of-service taint removed", millis(recovered.nanos() - heal));
        say("    all 5 are members again and armed; their kubelets report the Nodes Ready, and the controller removed "
                + "its taint and its fenced records.");
        Pause.sleep(Duration.ofSeconds(3));
    }

    private void maintenance() {
        AgentNode agent = agents.node(MAINTAINED);
        say("\n==> 4. Maintenance window on " + MAINTAINED + ": bashible creates /var/run/fencing-agent/disable "
                + "before draining.");
        say("    The agent disarms its watchdog with a magic close, so the node may stop feeding (or reboot) "
                + "without being reset.");
        long start = System.nanoTime();
        writeDisableFile(agent.disableFile(), "kernel upgrade by scripts/demo");
        agent.awaitStatus("disarmed by the disable file", s -> !s.getArmed()
                && s.getDisarmReasonsList().stream().anyMatch(r -> r.getKind() == DisarmReason.Kind.KIND_DISABLE_FILE),
                Duration.ofSeconds(30));
        timings.record("disable file -> " + MAINTAINED + " disarmed", millis(System.nanoTime() - start));
        say("    " + MAINTAINED + " disarmed; waiting one watchdog timeout and more to show it is not reset.");
        Pause.sleep(SETTINGS.watchdogTimeout().plusSeconds(3));
        if (!agent.watchdogEvents("reset", start).isEmpty()) {
            throw new IllegalStateException(MAINTAINED + " was reset while disarmed; see " + agent.agent().log());
        }
        say("    no reset. Maintenance done: bashible removes the file.");
        long end = System.nanoTime();
        try {
            Files.deleteIfExists(agent.disableFile());
        } catch (IOException e) {
            throw new IllegalStateException("cannot remove " + agent.disableFile() + ": " + e.getMessage(), e);
        }
        AgentStatus rearmed = agent.awaitStatus("re-armed", s -> s.getArmed() && s.getQuorumHeld(),
                ARM);
        timings.record("disable file removed -> " + MAINTAINED + " re-armed", millis(System.nanoTime() - end));
        say("    " + MAINTAINED + " armed again (" + rearmed.getHeard() + "/" + rearmed.getExpected()
                + " confirmed).");
        Pause.sleep(Duration.ofSeconds(2));
    }

    /** @return milliseconds from {@code sinceNanos} until the last majority consumer received a matching event */
    private long lastAtMajority(String what, long sinceNanos, Predicate<ConsumedEvent> filter, Duration timeout) {
        long latest = 0;
        for (String majority : MAJORITY) {
            ConsumedEvent event = agents.node(majority).consumer().await(what, sinceNanos, filter, timeout);
            latest = Math.max(latest, event.receivedNanos() - sinceNanos);
        }
        return millis(latest);
    }

    /** @return what the controller wrote into the NodeGroup's status from the agents' reports */
    private String controllerView() {
        JsonNode status = controlPlaneLab.controlPlane().nodeGroup().path("status");
        StringBuilder view = new StringBuilder("controller's view (NodeGroup status): expected ")
                .append(status.path("expected").asText("?")).append(", heard ").append(status.path("heard").asText("?"))
                .append(", armed ").append(status.path("armed").asText("?"));
        for (JsonNode condition : status.path("conditions")) {
            view.append(", ").append(condition.path("type").asText()).append('=').append(condition.path("status")
                    .asText()).append(" (").append(condition.path("reason").asText()).append(')');
        }
        List<String> fenced = new ArrayList<>();
        status.path("fencedNodes").forEach(n -> fenced.add(n.path("name").asText()));
        return view.append(", fencedNodes ").append(fenced).toString();
    }

    // ---- plumbing -----------------------------------------------------------------------------------------------

    private void say(String text) {
        if (table != null) {
            table.say(text);
        } else {
            out.println(text);
        }
    }

    private static void writeDisableFile(Path file, String reason) {
        try {
            Files.writeString(file, reason + "\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    private static <T> T awaitValue(String what, Supplier<Optional<T>> probe, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            Optional<T> value = probe.get();
            if (value.isPresent()) {
                return value.get();
            }
            Pause.sleep(POLL);
        }
        throw new IllegalStateException("no " + what + " within " + timeout);
    }

    private static long millis(long nanos) {
        return nanos / 1_000_000;
    }

    private static double seconds(com.google.protobuf.Duration d) {
        return d.getSeconds() + d.getNanos() / 1e9;
    }

    /** Stops the table, then everything the lab started; idempotent, also run by the shutdown hook on Ctrl-C. */
    private synchronized void cleanUp() {
        if (table != null) {
            table.close();
        }
        if (kube != null) {
            kube.close();
        }
        if (controlPlaneLab != null) {
            controlPlaneLab.close();
            out.println("cleaned up: namespaces, nftables rules and processes of lab "
                    + controlPlaneLab.lab().runId() + " removed");
            controlPlaneLab = null;
        }
    }
}
