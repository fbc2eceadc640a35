package dev.fencing.nodemanager.stream;

import dev.fencing.proto.nodemanager.v1.GroupConfig;

/**
 * What a group's agents are served: its policy and the members that go with it ({@link GroupConfigLog#lastValid()}).
 *
 * @param config     group, policy and members (no node, signals or keys)
 * @param generation the NodeGroup generation of the model this replica applied last
 * @param frozen     the last model was invalid, so this is the pair frozen from before (or kept from an earlier
 *                   controller); it changes only when the spec turns valid again
 */
public record ServedConfig(GroupConfig config, long generation, boolean frozen) {
}
