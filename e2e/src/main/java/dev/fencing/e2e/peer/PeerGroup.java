package dev.fencing.e2e.peer;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A set of gossip peers on one address (loopback, or a namespace address) that are all killed on {@link #close()},
 * whatever happened before — the thing tests put in {@code @AfterEach}.
 */
public final class PeerGroup implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PeerGroup.class);

    private final PeerLauncher launcher;
    private final String bind;
    private final LoopbackPorts ports;
    private final Path logDir;
    private final List<GossipPeer> peers = new ArrayList<>();

    /**
     * @param launcher how to start each kind
     * @param bind     address every peer binds (e.g. 127.0.0.1)
     * @param seed     seed of the port draw
     * @param logDir   where each peer's stderr goes
     */
    public PeerGroup(PeerLauncher launcher, String bind, long seed, Path logDir) {
        this.launcher = launcher;
        this.bind = bind;
        this.ports = new LoopbackPorts(seed);
        this.logDir = logDir;
    }

    /** Starts a peer with the {@code local} config on a fresh port and waits for its ready line. */
    public GossipPeer start(PeerKind kind, String name, UnaryOperator<PeerSpec> customize) {
        PeerSpec spec = customize.apply(PeerSpec.of(name, bind, ports.next(bind)));
        GossipPeer peer = launcher.start(kind, spec, logDir);
        peers.add(peer);
        peer.awaitReady(Duration.ofSeconds(30));
        return peer;
    }

    /** Starts a peer joining through {@code seeds}. */
    public GossipPeer startJoining(PeerKind kind, String name, Collection<GossipPeer> seeds,
                                   UnaryOperator<PeerSpec> customize) {
        List<String> addresses = seeds.stream().map(p -> p.spec().address()).toList();
        return start(kind, name, spec -> customize.apply(spec.joining(addresses)));
    }

    /** @return the peers started so far, in order */
    public List<GossipPeer> peers() {
        return List.copyOf(peers);
    }

    /** @return the names of {@code peers} */
    public static Set<String> names(Collection<GossipPeer> peers) {
        Set<String> names = new TreeSet<>();
        peers.forEach(p -> names.add(p.name()));
        return names;
    }

    /**
     * Waits until every one of {@code observers} lists exactly {@code expected} as alive (read after
     * {@code sinceNanos}).
     *
     * @return milliseconds from {@code sinceNanos} until the last observer converged
     */
    public static long awaitConverged(Collection<GossipPeer> observers, Set<String> expected, long sinceNanos,
                                      Duration timeout) {
        long last = sinceNanos;
        for (GossipPeer observer : observers) {
            long read = observer.process().await(observer + " sees alive=" + expected,
                    line -> line.receivedNanos() >= sinceNanos && "members".equals(line.text("event"))
                            && MembersView.from(line).alive().equals(expected), timeout).receivedNanos();
            last = Math.max(last, read);
        }
        return (last - sinceNanos) / 1_000_000;
    }

    /** Kills every peer still running. */
    @Override
    public void close() {
        for (GossipPeer peer : peers) {
            try {
                peer.close();
            } catch (RuntimeException e) {
                LOG.warn("event=peer-close-failed peer={} reason=\"{}\"", peer, e.getMessage());
            }
        }
    }
}
