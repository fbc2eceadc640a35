package dev.fencing.e2e.controlplane;

import io.fabric8.kubernetes.api.model.Node;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the real API server shows about the lab's nodes over time: every {@value #POLL_MILLIS} ms a snapshot of each
 * Node's Ready condition and taints and of the NodeGroup's {@code status.fencedNodes}. Scenarios use it to check that
 * Kubernetes sees a reset node as a cluster would (Ready goes Unknown, the node lifecycle controller taints it), that
 * the controller's fenced bookkeeping never runs ahead of Kubernetes (no node is recorded fenced while its Node is
 * Ready), and that recovery clears it all.
 */
public final class KubeNodeWatch implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KubeNodeWatch.class);
    private static final long POLL_MILLIS = 250;

    /**
     * One look at the API server.
     *
     * @param nanos   {@link System#nanoTime()} when the look started
     * @param ready   each Node's Ready status (True, False, Unknown, Missing)
     * @param taints  each Node's taint keys
     * @param fenced  the NodeGroup's {@code status.fencedNodes} names
     */
    public record Snapshot(long nanos, Map<String, String> ready, Map<String, Set<String>> taints,
                           List<String> fenced) {

        /** @return true when the API server shows {@code node}'s Ready condition as True */
        public boolean isReady(String node) {
            return "True".equals(ready.get(node));
        }

        /** @return true when {@code node} carries a taint with {@code key} */
        public boolean tainted(String node, String key) {
            return taints.getOrDefault(node, Set.of()).contains(key);
        }
    }

    private final ControlPlane controlPlane;
    private final List<Snapshot> snapshots = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService poller;
    private volatile String lastError = "";

    private KubeNodeWatch(ControlPlane controlPlane) {
        this.controlPlane = controlPlane;
        this.poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kube-node-watch");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts polling {@code controlPlane}'s API server. */
    public static KubeNodeWatch start(ControlPlane controlPlane) {
        KubeNodeWatch watch = new KubeNodeWatch(controlPlane);
        watch.poller.scheduleWithFixedDelay(watch::look, 0, POLL_MILLIS, TimeUnit.MILLISECONDS);
        return watch;
    }

    private void look() {
        long nanos = System.nanoTime();
        try {
            Map<String, String> ready = new TreeMap<>();
            Map<String, Set<String>> taints = new TreeMap<>();
            for (Map.Entry<String, Node> node : controlPlane.nodes().entrySet()) {
                ready.put(node.getKey(), ControlPlane.readiness(node.getValue()));
                taints.put(node.getKey(), ControlPlane.taintKeys(node.getValue()));
            }
            snapshots.add(new Snapshot(nanos, Map.copyOf(ready), Map.copyOf(taints),
                    List.copyOf(controlPlane.fencedNodes())));
        } catch (RuntimeException e) {
            // the API server is reached through the lab; a failed look is a gap in the record, not a failure
            if (!String.valueOf(e.getMessage()).equals(lastError)) {
                lastError = String.valueOf(e.getMessage());
                LOG.warn("event=kube-watch-look-failed reason=\"{}\"", lastError);
            }
        }
    }

    /** @return every snapshot taken at or after {@code sinceNanos} */
    public List<Snapshot> since(long sinceNanos) {
        List<Snapshot> result = new ArrayList<>();
        for (Snapshot s : snapshots) {
            if (s.nanos() >= sinceNanos) {
                result.add(s);
            }
        }
        return result;
    }

    /** @return the first snapshot at or after {@code sinceNanos} matching {@code condition} */
    public Optional<Snapshot> first(long sinceNanos, Predicate<Snapshot> condition) {
        return since(sinceNanos).stream().filter(condition).findFirst();
    }

    /**
     * Waits for the first snapshot at or after {@code sinceNanos} that matches {@code condition}.
     *
     * @return it
     * @throws IllegalStateException after {@code timeout} from now, with the last snapshot
     */
    public Snapshot await(String what, long sinceNanos, Predicate<Snapshot> condition, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Optional<Snapshot> found = first(sinceNanos, condition);
            if (found.isPresent()) {
                return found.get();
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the API server did not show " + what + " within " + timeout
                        + "; last look: " + (snapshots.isEmpty() ? "none" : snapshots.get(snapshots.size() - 1)));
            }
            dev.fencing.e2e.process.Pause.sleep(Duration.ofMillis(POLL_MILLIS));
        }
    }

    /**
     * @return snapshots in {@code [sinceNanos, untilNanos)} in which a node is recorded fenced while its Node is
     *     Ready: the controller ran ahead of Kubernetes (ARCHITECTURE §7 forbids it). Only meaningful before the
     *     node comes back: after its kubelet reports Ready again the record stays until the controller's next
     *     status write.
     */
    public List<Snapshot> fencedWhileReady(long sinceNanos, long untilNanos) {
        return since(sinceNanos).stream().filter(s -> s.nanos() < untilNanos)
                .filter(s -> s.fenced().stream().anyMatch(s::isReady)).toList();
    }

    @Override
    public void close() {
        poller.shutdownNow();
        try {
            poller.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
