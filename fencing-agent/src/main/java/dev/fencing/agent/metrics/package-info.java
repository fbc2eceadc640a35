/**
 * {@code /metrics} (Prometheus text), {@code /healthz} and {@code /readyz} ({@link
 * dev.fencing.agent.metrics.AgentHealth}) of the agent on the JDK HTTP server. The meters themselves are registered by
 * the components that own them (e.g. {@link dev.fencing.agent.api.EventHub#bindMetrics}); names start with
 * {@code fencing_} or {@code memberlist_} and carry their unit.
 */
package dev.fencing.agent.metrics;
