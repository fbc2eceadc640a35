package dev.fencing.e2e.agent;

import dev.fencing.e2e.netns.LabNode;
import dev.fencing.e2e.process.LoggedProcess;
import java.time.Duration;

/**
 * A process that runs on a lab node beside its agent and goes down with it when the node's watchdog resets the node:
 * the node's kubelet (stand-in), which keeps the Node Ready and hands the agent its pod's token. A reset kills it
 * with the agent; {@link AgentNode#boot()} starts it again before the agent, as a rebooting machine would.
 */
public interface NodeCompanion {

    /** Starts the companion in {@code node}'s namespace (first boot and every reboot); the lab kills it at teardown. */
    LoggedProcess start(LabNode node);

    /**
     * Waits until the agent has what it needs from the companion (its token file).
     *
     * @throws IllegalStateException after {@code timeout}, saying what is missing
     */
    void awaitReady(LabNode node, LoggedProcess companion, Duration timeout);
}
