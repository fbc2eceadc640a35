package dev.fencing.nodemanager.report;

import dev.fencing.proto.nodemanager.v1.AgentReport;
import java.time.Instant;
import java.util.Objects;

/**
 * The latest report of one agent as this controller replica received it.
 *
 * @param node       the agent's node
 * @param group      the group it was served from
 * @param report     what it said
 * @param receivedAt this controller's wall-clock receive time (ages in the report are subtracted from it)
 */
public record ReceivedReport(String node, String group, AgentReport report, Instant receivedAt) {

    /** Checks presence. */
    public ReceivedReport {
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(report, "report");
        Objects.requireNonNull(receivedAt, "receivedAt");
    }
}
