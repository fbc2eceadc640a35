package dev.fencing.e2e.demo;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentNode;
import dev.fencing.e2e.controlplane.ControlPlane;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The demo's terminal: story lines, and under them a table of every node's state refreshed every second.
 * On a terminal the table is redrawn in place; into a pipe or file it is printed again only when a node's state
 * changes (feed counters alone do not count) or every {@value #PIPE_REPRINT_SECONDS} seconds, so a transcript
 * stays readable.
 */
final class LiveTable implements AutoCloseable {

    private static final int PIPE_REPRINT_SECONDS = 15;
    private static final String CURSOR_UP_AND_CLEAR = "\033[%dF\033[J";

    private final AgentCluster agents;
    private final ControlPlane controlPlane;
    private final PrintStream out;
    private final boolean terminal;
    private final long startNanos = System.nanoTime();
    private final ScheduledExecutorService refresher = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "demo-live-table");
        thread.setDaemon(true);
        return thread;
    });
    private int drawnLines;
    private String lastSignature = "";
    private long lastPrintNanos;

    LiveTable(AgentCluster agents, ControlPlane controlPlane, PrintStream out, boolean terminal) {
        this.agents = agents;
        this.controlPlane = controlPlane;
        this.out = out;
        this.terminal = terminal;
    }

    /** Starts refreshing every second. */
    void start() {
        refresher.scheduleWithFixedDelay(this::refresh, 0, 1, TimeUnit.SECONDS);
    }

    /** Prints a story line above the table. */
    synchronized void say(String line) {
        erase();
        out.println(line);
        lastSignature = "";
    }

    private void refresh() {
        Map<String, NodeRow.KubeView> kube = kubeView();
        List<NodeRow> rows = new ArrayList<>();
        for (AgentNode agent : agents.nodes()) {
            boolean running = agent.running();
            rows.add(new NodeRow(agent.name(), running ? agent.status() : Optional.empty(), running,
                    agent.watchdogEvents("feed", 0).size(), agent.watchdogEvents("reset", 0).size(),
                    kube.getOrDefault(agent.name(), NodeRow.KubeView.UNKNOWN)));
        }
        draw(rows);
    }

    // the real API server's view: each Node's Ready condition and taints, the NodeGroup's fenced nodes
    private Map<String, NodeRow.KubeView> kubeView() {
        Map<String, NodeRow.KubeView> view = new HashMap<>();
        try {
            List<String> fenced = controlPlane.fencedNodes();
            controlPlane.nodes().forEach((name, node) -> view.put(name, new NodeRow.KubeView(
                    ControlPlane.readiness(node), ControlPlane.taintKeys(node), fenced.contains(name))));
        } catch (RuntimeException e) {
            // a failed look shows "?" for a second; the story goes on
            view.clear();
        }
        return view;
    }

    private synchronized void draw(List<NodeRow> rows) {
        String signature = String.join("\n", rows.stream().map(NodeRow::signature).toList());
        long now = System.nanoTime();
        if (!terminal && signature.equals(lastSignature)
                && now - lastPrintNanos < Duration.ofSeconds(PIPE_REPRINT_SECONDS).toNanos()) {
            return;
        }
        erase();
        List<String> lines = new ArrayList<>();
        lines.add(String.format("  t=%5.1fs  %s", (now - startNanos) / 1e9, NodeRow.HEADER));
        rows.forEach(r -> lines.add("            " + r.render()));
        lines.forEach(out::println);
        out.flush();
        drawnLines = terminal ? lines.size() : 0;
        lastSignature = signature;
        lastPrintNanos = now;
    }

    private void erase() {
        if (drawnLines > 0) {
            out.printf(CURSOR_UP_AND_CLEAR, drawnLines);
            drawnLines = 0;
        }
    }

    /** Stops refreshing; the last table stays on screen. */
    @Override
    public void close() {
        refresher.shutdownNow();
        try {
            refresher.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
