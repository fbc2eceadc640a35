package dev.fencing.memberlist.state;

import dev.fencing.memberlist.codec.Message;

/** Turns one message into its packet form (type byte first); the codec's MessageCodec in production. */
@FunctionalInterface
public interface MessageEncoder {
  byte[] encode(Message message);
}
