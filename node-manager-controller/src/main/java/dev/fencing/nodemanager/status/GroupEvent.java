package dev.fencing.nodemanager.status;

/**
 * A Kubernetes Event to emit.
 *
 * @param onNode  true: about the Node {@code name}; false: about the NodeGroup {@code name}
 * @param name    the object's name
 * @param type    Normal or Warning
 * @param reason  CamelCase reason (Armed, Disarmed, QuorumLost, QuorumRecovered, NodeFenced)
 * @param message what happened, for humans
 */
public record GroupEvent(boolean onNode, String name, String type, String reason, String message) {
}
