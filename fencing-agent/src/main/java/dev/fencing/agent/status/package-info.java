/**
 * The host-visible status file ({@code /var/run/fencing-agent/status}, flag {@code --status-file}): {@code key=value}
 * lines the bashible disarm step reads on a node without a JVM. {@link dev.fencing.agent.status.HostStatus} is the
 * content, {@link dev.fencing.agent.status.StatusFileWriter} keeps the file current (atomically replaced on every
 * change, refreshed at least every 5 s).
 */
package dev.fencing.agent.status;
