package dev.fencing.e2e.scenario;

import dev.fencing.e2e.agent.AgentCluster;
import dev.fencing.e2e.process.ObservedLine;
import java.time.Duration;
import java.util.Set;
import org.awaitility.Awaitility;

/** Watching the emulated watchdogs of a lab for resets: the checks every scenario makes. */
final class ResetWatch {

    private ResetWatch() {
    }

    /** @return milliseconds from {@code sinceNanos} to {@code node}'s next watchdog reset, waiting up to timeout */
    static long awaitReset(AgentCluster cluster, String node, long sinceNanos, Duration timeout) {
        ObservedLine reset = cluster.node(node).watchdog().await(node + " watchdog reset",
                l -> l.receivedNanos() >= sinceNanos && "reset".equals(l.text("event")), timeout);
        return (reset.receivedNanos() - sinceNanos) / 1_000_000;
    }

    /** Watches {@code nodes} until {@code after} has passed since {@code startNanos}: a reset fails at once. */
    static void holdWithoutResets(AgentCluster cluster, Set<String> nodes, long startNanos, Duration after) {
        long left = Math.max(1, (startNanos + after.toNanos() - System.nanoTime()) / 1_000_000);
        Awaitility.await("no reset on " + nodes)
                .during(Duration.ofMillis(left))
                .atMost(Duration.ofMillis(left).plusSeconds(5))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> cluster.resetsSince(startNanos).entrySet().stream()
                        .filter(e -> nodes.contains(e.getKey())).allMatch(e -> e.getValue().isEmpty()));
    }
}
