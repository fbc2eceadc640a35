package dev.fencing.e2e.demo;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.agent.AgentNode;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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

    LiveTable(AgentCluster agents, PrintStream out, boolean terminal) {
        this.agents = agents;
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
        List<NodeRow> rows = new ArrayList<>();
        for (AgentNode agent : agents.nodes()) {
            boolean running = agent.running();
            rows.add(new NodeRow(agent.name(), running ? agent.status() : Optional.empty(), running,
                    agent.watchdogEvents("feed", 0).size(), agent.watchdogEvents("reset", 0).size()));
        }
        draw(rows);
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
