package dev.fencing.memberlist.codec;

/**
 * A memberlist protocol message, one record per message struct of the Go library. Field names follow the Go
 * struct fields (they are the msgpack map keys on the wire). uint32 fields are held in {@code long}, uint16 in
 * {@code int}; nullable byte arrays are encoded as msgpack nil when null.
 */
public sealed interface Message
    permits Ping, IndirectPingReq, AckResp, NackResp, ErrResp, Suspect, Alive, Dead, UserMsg, PushPull {

  /** The message-type byte that precedes the msgpack body on the wire. */
  MessageType type();
}
