package dev.fencing.e2e.peer;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;

/**
 * Picks ports free for both UDP and TCP on an address. Memberlist binds both on one port, and the machine is shared
 * with other test suites, so ports come from a random draw in a high range rather than from a fixed list.
 */
public final class LoopbackPorts {

    private static final int LOW = 20_000;
    private static final int HIGH = 45_000;
    private static final int MAX_ATTEMPTS = 500;

    private final Random random;
    private final Set<Integer> handedOut = new HashSet<>();

    /** @param seed seed of the random draw (printed by callers so a collision can be replayed) */
    public LoopbackPorts(long seed) {
        this.random = new Random(seed);
    }

    /**
     * @return a port that was free for UDP and TCP on {@code address} a moment ago and was not handed out before
     * @throws IllegalStateException when no free port is found in a bounded number of attempts
     */
    public synchronized int next(String address) {
        InetAddress bind;
        try {
            bind = InetAddress.getByName(address);
        } catch (IOException e) {
            throw new IllegalArgumentException("bad bind address " + address, e);
        }
        for (int i = 0; i < MAX_ATTEMPTS; i++) {
            int port = LOW + random.nextInt(HIGH - LOW);
            if (!handedOut.contains(port) && free(bind, port)) {
                handedOut.add(port);
                return port;
            }
        }
        throw new IllegalStateException("no port free for UDP and TCP on " + address + " after " + MAX_ATTEMPTS
                + " attempts in " + LOW + ".." + HIGH);
    }

    private static boolean free(InetAddress bind, int port) {
        try (ServerSocket tcp = new ServerSocket()) {
            tcp.setReuseAddress(false);
            tcp.bind(new InetSocketAddress(bind, port));
            try (DatagramSocket udp = new DatagramSocket(new InetSocketAddress(bind, port))) {
                return udp.isBound();
            }
        } catch (IOException e) {
            return false;
        }
    }
}
