package dev.fencing.memberlist.codec;

/**
 * Room for the encrypted stream frames a node holds in memory at once: {@link StreamCodec} reserves a frame's
 * announced length when its 5-byte header arrives, before allocating anything for it, and gives it back once the
 * frame is decrypted and decoded. A frame that gets no room is refused from its header. The transport shares one
 * budget among its inbound streams ({@code InboundStreamLimits.maxInboundFrameBytes}); replies on streams this node
 * dialed are not budgeted (the node chose the peer, and the protocol opens few at a time).
 */
public interface FrameBudget {
  /** A budget that always has room: outbound streams and transports that bound nothing. */
  FrameBudget UNLIMITED =
      new FrameBudget() {
        @Override
        public boolean tryReserve(int bytes) {
          return true;
        }

        @Override
        public void release(int bytes) {
          // nothing was taken
        }
      };

  /**
   * Takes room for {@code bytes}; may block briefly while room is being made.
   *
   * @return false if there is none: the frame is refused
   */
  boolean tryReserve(int bytes);

  /** Gives back what a successful {@link #tryReserve} took. */
  void release(int bytes);
}
