package dev.fencing.e2e.agent;

import dev.fencing.proto.fencing.v1.EventType;

/**
 * One fencing.v1 event as a local consumer (what Cilium would be) received it.
 *
 * @param receivedAtMillis wall-clock time this JVM received it (epoch ms)
 * @param receivedNanos    {@link System#nanoTime()} at receipt, for latencies measured in this JVM
 * @param node             the member the event is about
 * @param type             JOIN or LEFT
 * @param source           the agent's sourceName: snapshot, gossip, isolated
 * @param subscription     which (re)subscription of the consumer delivered it, from 1
 */
public record ConsumedEvent(long receivedAtMillis, long receivedNanos, String node, EventType type, String source,
                            int subscription) {

    /** @return true for a live (non-snapshot) LEFT of {@code name} */
    public boolean isLiveLeftOf(String name) {
        return type == EventType.LEFT && node.equals(name) && !"snapshot".equals(source);
    }

    /** @return true for a JOIN of {@code name} (snapshot or live) */
    public boolean isJoinOf(String name) {
        return type == EventType.JOIN && node.equals(name);
    }
}
