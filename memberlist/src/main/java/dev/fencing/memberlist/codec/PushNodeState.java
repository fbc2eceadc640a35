package dev.fencing.memberlist.codec;

/**
 * One node's entry in a push/pull exchange. {@code state}: 0 alive, 1 suspect, 2 dead, 3 left (memberlist's
 * NodeStateType numbering).
 */
public record PushNodeState(
    String name, byte[] addr, int port, byte[] meta, long incarnation, int state, byte[] vsn) {}
