package dev.fencing.nodemanager.escalation;

import java.time.Duration;
import java.util.Map;

/**
 * Runs one ClusterLabs fence agent: the seam between the escalation logic and processes, so unit tests can run a
 * fake agent while the integration tests run the real {@code fence_ipmilan}.
 */
public interface FenceAgentRunner {

    /**
     * Runs {@code agent} with {@code arguments} as {@code name=value} lines on its stdin (the fence agents' stdin
     * protocol), waiting at most {@code timeout}.
     *
     * @param agent     the agent's executable name ({@code fence_*}, no path)
     * @param arguments stdin parameters, {@code action} included
     * @param timeout   how long the agent may run before it is killed
     */
    AgentOutcome run(String agent, Map<String, String> arguments, Duration timeout);

    /**
     * How a run ended.
     *
     * @param exitCode the exit code, or null when the agent timed out or could not start
     * @param output   the end of its merged stdout and stderr (not redacted: the caller removes secret values)
     * @param error    why there is no exit code, or null
     */
    record AgentOutcome(Integer exitCode, String output, String error) {
    }
}
