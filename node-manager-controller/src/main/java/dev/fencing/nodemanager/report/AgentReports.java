package dev.fencing.nodemanager.report;

import dev.fencing.proto.nodemanager.v1.AgentReport;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The latest report per agent (with its receive time) and which agents hold a stream to this replica. Written by
 * the AgentControl service, read by the status reconciler; listeners learn which group changed.
 */
public final class AgentReports {

    private final Map<String, ReceivedReport> latest = new ConcurrentHashMap<>();
    private final Map<String, Integer> streams = new ConcurrentHashMap<>();
    // Nodes forgotten while their agent still held a stream: their report goes with the last stream.
    private final java.util.Set<String> gone = new java.util.HashSet<>();
    private final List<Consumer<String>> listeners = new CopyOnWriteArrayList<>();
    private final List<Consumer<ReceivedReport>> reportListeners = new CopyOnWriteArrayList<>();

    /** Registers a listener called with the group whose reports or connections changed. */
    public void addListener(Consumer<String> groupChanged) {
        listeners.add(groupChanged);
    }

    /** Registers a listener called with every report recorded (on the recording thread: hand work over). */
    public void addReportListener(Consumer<ReceivedReport> listener) {
        reportListeners.add(listener);
    }

    /** Records a report; listeners are told when something status-relevant changed. */
    public void record(String node, String group, AgentReport report, Instant receivedAt) {
        ReceivedReport received = new ReceivedReport(node, group, report, receivedAt);
        ReceivedReport previous = latest.put(node, received);
        reportListeners.forEach(l -> l.accept(received));
        if (previous == null || !relevantEqual(previous.report(), report) || !previous.group().equals(group)) {
            notify(group);
        }
    }

    /** An agent opened a stream (of a Node that exists again, if it was forgotten). */
    public void connected(String node, String group) {
        synchronized (gone) {
            gone.remove(node);
            streams.merge(node, 1, Integer::sum);
        }
        notify(group);
    }

    /** An agent's stream ended. */
    public void disconnected(String node, String group) {
        synchronized (gone) {
            streams.computeIfPresent(node, (k, v) -> v <= 1 ? null : v - 1);
            if (!streams.containsKey(node) && gone.remove(node)) {
                latest.remove(node);
            }
        }
        notify(group);
    }

    /**
     * Forgets the latest report of {@code node} (its Node was deleted or left every group), unless its agent still
     * holds a stream here. Without it, reports of replaced nodes stayed for good, each with an entry per peer: heap
     * that grows with node churn in large ephemeral groups.
     */
    public void forget(String node) {
        synchronized (gone) {
            if (streams.containsKey(node)) {
                gone.add(node);
            } else {
                latest.remove(node);
            }
        }
    }

    /**
     * Drops the reports of every agent that holds no stream to this replica now; returns how many. Called when this
     * replica starts leading: such a report was received earlier (while following, or before a previous leadership)
     * and the agent may have reported to the previous leader since, so the fenced-node rule falls back to the
     * {@code fencing-enabled} label the previous leader kept.
     */
    public int forgetDisconnected() {
        int dropped = 0;
        synchronized (gone) {
            for (String node : java.util.List.copyOf(latest.keySet())) {
                if (!streams.containsKey(node)) {
                    latest.remove(node);
                    dropped++;
                }
            }
        }
        return dropped;
    }

    /** How many reports are held, for tests and metrics. */
    public int size() {
        return latest.size();
    }

    /** True while the agent of {@code node} holds at least one stream to this replica. */
    public boolean isConnected(String node) {
        return streams.containsKey(node);
    }

    /** The latest report of {@code node}. */
    public Optional<ReceivedReport> latest(String node) {
        return Optional.ofNullable(latest.get(node));
    }

    private void notify(String group) {
        for (Consumer<String> l : listeners) {
            l.accept(group);
        }
    }

    // Reports repeat every interval with fresh ages; only state changes should wake the status reconciler.
    private static boolean relevantEqual(AgentReport a, AgentReport b) {
        return a.getArmed() == b.getArmed()
                && a.getQuorumHeld() == b.getQuorumHeld()
                && a.getFencingInProgress() == b.getFencingInProgress()
                && a.getFinalReport() == b.getFinalReport()
                && a.getMode() == b.getMode()
                && a.getIsolated() == b.getIsolated()
                && a.getConfirmed() == b.getConfirmed()
                && a.getExpected() == b.getExpected()
                && a.getKeyringRevision() == b.getKeyringRevision()
                && a.getDisarmReasonsList().equals(b.getDisarmReasonsList());
    }
}
