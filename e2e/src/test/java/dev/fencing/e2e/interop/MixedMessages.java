package dev.fencing.e2e.interop;

import dev.fencing.e2e.peer.GossipPeer;
import java.time.Duration;

/** User-message delivery between peers of any kind, shared by the interop ITs. */
final class MixedMessages {

    private static final Duration MESSAGE = Duration.ofSeconds(10);

    private MixedMessages() {
    }

    /** Sends until it arrives; best-effort (UDP) messages get up to three attempts, reliable ones exactly one. */
    static void deliver(GossipPeer from, GossipPeer to, String message, boolean reliable) {
        int attempts = reliable ? 1 : 3;
        IllegalStateException last = null;
        for (int attempt = 1; attempt <= attempts; attempt++) {
            long sentAt = System.nanoTime();
            from.sendUserMessage(to.name(), message, reliable);
            try {
                to.awaitUserMessage(message, attempt == attempts ? MESSAGE : Duration.ofSeconds(3));
                System.out.printf("interop message: %s -> %s, %d bytes, reliable=%s, attempt %d, %d ms%n", from, to,
                        message.length(), reliable, attempt, (System.nanoTime() - sentAt) / 1_000_000);
                return;
            } catch (IllegalStateException e) {
                last = e;
            }
        }
        throw last;
    }
}
