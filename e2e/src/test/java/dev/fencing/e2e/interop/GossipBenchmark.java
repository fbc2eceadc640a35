package dev.fencing.e2e.interop;

import dev.fencing.e2e.netns.LabNode;
import dev.fencing.e2e.netns.NetnsLab;
import dev.fencing.e2e.peer.GoPeerBinary;
import dev.fencing.e2e.peer.GossipPeer;
import dev.fencing.e2e.peer.MembersView;
import dev.fencing.e2e.peer.NodeJar;
import dev.fencing.e2e.peer.PeerGroup;
import dev.fencing.e2e.peer.PeerKind;
import dev.fencing.e2e.peer.PeerLauncher;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.Pause;
import dev.fencing.e2e.process.ProcessStats;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Same-run comparison of the Java memberlist node with the Go memberlist 0.2.2 peer under identical configs:
 * N=5 on loopback (inside one private network namespace, so per-node traffic can be counted with nftables without
 * touching the host), for each config: convergence time, idle traffic per node, a node's RSS and CPU at idle, and
 * crash-to-dead latency at every survivor after one node is SIGKILLed. Prints a table; never fails on a figure.
 *
 * <p>Run as root: {@code ./mvnw -o -pl e2e test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=dev.fencing.e2e.interop.GossipBenchmark [-Dexec.args="--configs local,lan --idle 20 --impls go,java"]}
 */
public final class GossipBenchmark {

    private static final int N = 5;
    private static final Duration CONVERGE = Duration.ofSeconds(60);
    private static final Duration DETECT = Duration.ofSeconds(120);

    /** One row of the table. */
    record Result(String config, PeerKind kind, long convergeMillis, double txBytesPerSecondPerNode,
                  long rssKib, double cpuPercent, List<Long> detectMillis) {
    }

    private GossipBenchmark() {
    }

    public static void main(String[] args) {
        List<String> configs = List.of("local", "lan");
        int idleSeconds = 20;
        List<PeerKind> kinds = List.of(PeerKind.GO, PeerKind.JAVA);
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--configs" -> configs = Arrays.asList(args[i + 1].split(","));
                case "--idle" -> idleSeconds = Integer.parseInt(args[i + 1]);
                case "--impls" -> kinds = Arrays.stream(args[i + 1].split(","))
                        .map(k -> PeerKind.valueOf(k.toUpperCase(Locale.ROOT))).toList();
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + "; use --configs local,lan,wan --idle SECONDS --impls go,java");
            }
        }
        ProjectLayout layout = ProjectLayout.fromWorkingDirectory();
        Path goBinary = GoPeerBinary.build(layout);
        Path nodeJar = kinds.contains(PeerKind.JAVA) ? NodeJar.locate(layout) : null;
        List<Result> results = new ArrayList<>();
        try (NetnsLab lab = NetnsLab.create(List.of("bench"))) {
            LabNode host = lab.node("bench");
            PeerLauncher launcher = new PeerLauncher(goBinary, nodeJar, PeerLauncher.DEFAULT_JAVA_OPTIONS,
                    host.execPrefix());
            for (String config : configs) {
                for (PeerKind kind : kinds) {
                    results.add(measure(lab, launcher, config, kind, idleSeconds,
                            layout.logDir("benchmark").resolve(config + "-" + kind)));
                    lab.healAll();
                }
            }
        }
        print(results, idleSeconds);
        System.exit(0);
    }

    private static Result measure(NetnsLab lab, PeerLauncher launcher, String config, PeerKind kind,
                                  int idleSeconds, Path logDir) {
        System.out.printf("benchmark: %s config, %d %s nodes ...%n", config, N, kind);
        try (PeerGroup group = new PeerGroup(launcher, "127.0.0.1", (config + kind).hashCode(), logDir)) {
            long start = System.nanoTime();
            GossipPeer seed = group.start(kind, "n1", spec -> spec.withConfig(config));
            for (int i = 2; i <= N; i++) {
                group.startJoining(kind, "n" + i, List.of(seed), spec -> spec.withConfig(config));
            }
            List<GossipPeer> peers = group.peers();
            long convergeMillis = PeerGroup.awaitConverged(peers, PeerGroup.names(peers), start, CONVERGE);

            Map<GossipPeer, LongSupplier> counters = new LinkedHashMap<>();
            for (GossipPeer peer : peers) {
                counters.put(peer, lab.countBytesSentFrom("bench", peer.spec().port()));
            }
            Pause.sleep(Duration.ofSeconds(3));
            long bytesBefore = total(counters);
            ProcessStats before = ProcessStats.of(seed.process().pid());
            long idleStart = System.nanoTime();
            Pause.sleep(Duration.ofSeconds(idleSeconds));
            double seconds = (System.nanoTime() - idleStart) / 1e9;
            ProcessStats after = ProcessStats.of(seed.process().pid());
            long bytes = total(counters) - bytesBefore;

            GossipPeer victim = peers.get(N - 1);
            long crashAt = System.nanoTime();
            victim.crash();
            List<Long> detect = new ArrayList<>();
            for (GossipPeer survivor : peers.subList(0, N - 1)) {
                long seenAt = survivor.process().await(survivor + " declares " + victim.name() + " dead",
                        line -> line.receivedNanos() >= crashAt && "members".equals(line.text("event"))
                                && !MembersView.from(line).notDead().contains(victim.name()), DETECT)
                        .receivedNanos();
                detect.add((seenAt - crashAt) / 1_000_000);
            }
            return new Result(config, kind, convergeMillis, bytes / seconds / N, after.rssKib(),
                    100 * (after.cpuSeconds() - before.cpuSeconds()) / seconds, detect);
        }
    }

    private static long total(Map<GossipPeer, LongSupplier> counters) {
        return counters.values().stream().mapToLong(LongSupplier::getAsLong).sum();
    }

    private static void print(List<Result> results, int idleSeconds) {
        System.out.println();
        System.out.printf("Gossip benchmark: N=%d on loopback, idle window %d s, crash = SIGKILL of one node%n", N,
                idleSeconds);
        System.out.println("| config | impl | converge ms | crash->dead ms at survivors (min/median/max) "
                + "| tx bytes/s per node | RSS MiB (n1) | CPU % (n1, idle) |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (Result r : results) {
            List<Long> sorted = r.detectMillis().stream().sorted().toList();
            System.out.printf(Locale.ROOT, "| %s | %s | %d | %d / %d / %d | %.0f | %.1f | %.2f |%n", r.config(),
                    r.kind() == PeerKind.GO ? "Go 0.2.2" : "Java", r.convergeMillis(), sorted.get(0),
                    sorted.get(sorted.size() / 2), sorted.get(sorted.size() - 1), r.txBytesPerSecondPerNode(),
                    r.rssKib() / 1024.0, r.cpuPercent());
        }
        System.out.println();
        for (String config : results.stream().map(Result::config).distinct().toList()) {
            Result go = find(results, config, PeerKind.GO);
            Result java = find(results, config, PeerKind.JAVA);
            if (go == null || java == null) {
                continue;
            }
            System.out.printf(Locale.ROOT, "Java/Go ratios (%s): median detection %.2f, bytes/s %.2f, RSS %.2f, "
                            + "CPU %.2f%n", config, (double) median(java) / Math.max(1, median(go)),
                    java.txBytesPerSecondPerNode() / Math.max(1, go.txBytesPerSecondPerNode()),
                    (double) java.rssKib() / Math.max(1, go.rssKib()),
                    java.cpuPercent() / Math.max(0.01, go.cpuPercent()));
        }
    }

    private static Result find(List<Result> results, String config, PeerKind kind) {
        return results.stream().filter(r -> r.config().equals(config) && r.kind() == kind).findFirst().orElse(null);
    }

    private static long median(Result r) {
        List<Long> sorted = r.detectMillis().stream().sorted().toList();
        return sorted.get(sorted.size() / 2);
    }
}
