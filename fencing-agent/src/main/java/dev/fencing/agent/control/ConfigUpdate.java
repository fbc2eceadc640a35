package dev.fencing.agent.control;

import dev.fencing.proto.nodemanager.v1.GroupConfig;

/**
 * A complete configuration the agent should now run with, after a full config or a delta was applied.
 *
 * @param config   the materialised group configuration (members sorted by name)
 * @param epoch    the controller's configuration history identity
 * @param revision the revision of {@code config} within {@code epoch}
 * @param source   {@code "controller"} when it just came from the controller, {@code "cache"} when read from the
 *                 state dir at start
 */
public record ConfigUpdate(GroupConfig config, String epoch, long revision, String source) {

    /** Source of a config received over AgentControl. */
    public static final String SOURCE_CONTROLLER = "controller";
    /** Source of a config read from the state dir. */
    public static final String SOURCE_CACHE = "cache";
}
