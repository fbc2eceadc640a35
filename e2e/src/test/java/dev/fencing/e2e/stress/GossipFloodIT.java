package dev.fencing.e2e.stress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.agent.AgentLauncher;
import dev.fencing.e2e.agent.AgentSettings;
import dev.fencing.e2e.agent.FencingConsumer;
import dev.fencing.e2e.peer.LoopbackPorts;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.JsonLinesProcess;
import dev.fencing.e2e.process.LoggedProcess;
import dev.fencing.e2e.process.ObservedLine;
import dev.fencing.e2e.process.Pause;
import dev.fencing.proto.fencing.v1.AgentStatus;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real agent jar with a 64 MiB heap ({@link AgentLauncher#AGENT_JVM_OPTIONS}: -Xmx64m
 * -XX:+ExitOnOutOfMemoryError), a standalone group of one on loopback so it holds quorum and feeds an emulated
 * softdog, under three attacks on its gossip port: a flood of connections announcing and sending 20 MiB frames,
 * 1000 slow connections, and UDP and TCP LZW bombs (a compound of compressed parts, sealed with the group key). It
 * must keep feeding throughout: the emulator never resets, the process stays alive and armed, feeds keep counting.
 * The figures (peak RSS, feeds during each attack, connections the agent closed, refusals per cap from its log) are
 * printed, not asserted.
 */
class GossipFloodIT {

    private static final String GROUP = "flood";
    private static final String NODE = "node-a";
    private static final byte[] KEY = "sixteen byte key".getBytes(StandardCharsets.US_ASCII);
    private static final Duration WATCHDOG_TIMEOUT = Duration.ofSeconds(6);
    private static final Pattern REFUSED = Pattern.compile("limit=(\\w+) refused_total=(\\d+)");

    private static Path dir;
    private static JsonLinesProcess watchdog;
    private static LoggedProcess agent;
    private static FencingConsumer consumer;
    private static GossipAttacks attacks;
    private static final AtomicLong peakRssKib = new AtomicLong();
    private static final AtomicBoolean sampling = new AtomicBoolean(true);
    private static Thread sampler;

    @BeforeAll
    static void startArmedAgent() throws IOException {
        ProjectLayout layout = ProjectLayout.fromWorkingDirectory();
        AgentLauncher launcher = AgentLauncher.locate(layout);
        dir = layout.logDir("gossip-flood");
        Files.createDirectories(dir);
        // logs are appended to: start from empty ones so the figures are this run's
        try (var files = Files.list(dir)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                Files.delete(f);
            }
        }
        int port = new LoopbackPorts(20261123L).next("127.0.0.1");
        String yaml = AgentSettings.fastFence().standaloneYaml(GROUP,
                List.of(new AgentSettings.Member(NODE, "127.0.0.1", port)))
                + "gossip:\n  keys: [\"" + Base64.getEncoder().encodeToString(KEY) + "\"]\n";
        Path config = dir.resolve("cluster.yaml");
        Files.writeString(config, yaml, StandardCharsets.UTF_8);
        Path fifo = dir.resolve("watchdog");
        Files.deleteIfExists(fifo);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();

        List<String> emulator = new ArrayList<>(List.of(java, "-Xmx32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        emulator.addAll(launcher.softdogEmulator());
        emulator.addAll(List.of("--fifo", fifo.toString(), "--timeout", WATCHDOG_TIMEOUT.toMillis() + "ms",
                "--reset-command", "true"));
        watchdog = JsonLinesProcess.start("watchdog", emulator, dir);
        watchdog.await("watchdog emulator started", l -> "started".equals(l.text("event")), Duration.ofSeconds(30));

        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(AgentLauncher.AGENT_JVM_OPTIONS);
        // heap before and after each collection, for the figures of the concurrent-decode attack
        command.add("-Xlog:gc:file=" + dir.resolve("gc.log"));
        command.addAll(launcher.agentCli());
        command.addAll(List.of("run", "--config", config.toString(), "--node", NODE,
                "--socket", dir.resolve("agent.sock").toString(), "--watchdog-device", fifo.toString(),
                "--disable-file", dir.resolve("disable").toString(), "--state-dir", dir.resolve("state").toString()));
        agent = LoggedProcess.start("agent", command, dir);
        consumer = FencingConsumer.start(NODE, dir.resolve("agent.sock"));
        awaitStatus("armed with quorum and feeding", s -> s.getArmed() && s.getQuorumHeld() && s.getFeedsTotal() > 0,
                Duration.ofSeconds(40));
        System.out.printf("gossip-flood: agent armed, peak RSS before any attack %d KiB (VmHWM)%n",
                hwmKib(agent.pid()).orElse(-1L));
        attacks = new GossipAttacks(new InetSocketAddress("127.0.0.1", port), GROUP, KEY);
        sampler = new Thread(GossipFloodIT::sampleRss, "rss-sampler");
        sampler.setDaemon(true);
        sampler.start();
    }

    @AfterAll
    static void stopEverything() throws InterruptedException {
        sampling.set(false);
        if (sampler != null) {
            sampler.join(2000);
        }
        if (consumer != null) {
            consumer.close();
        }
        if (agent != null) {
            agent.terminate(Duration.ofSeconds(10));
        }
        if (watchdog != null) {
            watchdog.close();
        }
        System.out.printf("gossip-flood: agent peak RSS %d KiB (VmHWM); heap %s; highest refused_total per cap in its %d "
                + "limit_exceeded log lines %s; logs in %s%n", peakRssKib.get(), heapFromGcLog(), limitLogLines(),
                refusalsFromLog(), dir);
    }

    private static void sampleRss() {
        while (sampling.get() && agent.isAlive()) {
            hwmKib(agent.pid()).ifPresent(kib -> peakRssKib.accumulateAndGet(kib, Math::max));
            Pause.sleep(Duration.ofMillis(200));
        }
    }

    /** The process's peak resident set ({@code VmHWM}), empty once it is gone. */
    private static Optional<Long> hwmKib(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Optional.of(Long.parseLong(line.replaceAll("[^0-9]", "")));
                }
            }
        } catch (IOException | RuntimeException gone) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    /** Largest heap in use before a collection and largest left after one, from the agent's {@code -Xlog:gc}. */
    private static String heapFromGcLog() {
        Pattern pause = Pattern.compile("Pause (Young|Full).* (\\d+)M->(\\d+)M\\((\\d+)M\\)");
        long before = -1;
        long after = -1;
        long collections = 0;
        long full = 0;
        try {
            for (String line : Files.readAllLines(dir.resolve("gc.log"), StandardCharsets.UTF_8)) {
                Matcher m = pause.matcher(line);
                if (m.find()) {
                    collections++;
                    full += "Full".equals(m.group(1)) ? 1 : 0;
                    before = Math.max(before, Long.parseLong(m.group(2)));
                    after = Math.max(after, Long.parseLong(m.group(3)));
                }
            }
        } catch (IOException e) {
            return "unreadable gc log: " + e.getMessage();
        }
        return "peak used before a collection " + before + " MiB, peak live after one " + after + " MiB ("
                + collections + " collections, " + full + " full)";
    }

    /** How many {@code limit_exceeded} lines the agent logged (at most one per cap per 10 s). */
    private static long limitLogLines() {
        try (var lines = Files.lines(agent.log(), StandardCharsets.UTF_8)) {
            return lines.filter(l -> l.contains("event=limit_exceeded")).count();
        } catch (IOException e) {
            return -1;
        }
    }

    /** The highest {@code refused_total} the agent logged per cap (its log lines are rate-limited). */
    private static Map<String, Long> refusalsFromLog() {
        Map<String, Long> out = new TreeMap<>();
        if (agent == null) {
            return out;
        }
        try {
            for (String line : Files.readAllLines(agent.log(), StandardCharsets.UTF_8)) {
                Matcher m = REFUSED.matcher(line);
                if (line.contains("event=limit_exceeded") && m.find()) {
                    out.merge(m.group(1), Long.parseLong(m.group(2)), Math::max);
                }
            }
        } catch (IOException e) {
            out.put("unreadable log: " + e.getMessage(), -1L);
        }
        return out;
    }

    private static AgentStatus awaitStatus(String what, java.util.function.Predicate<AgentStatus> condition,
            Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Optional<AgentStatus> last = Optional.empty();
        while (System.nanoTime() < deadline) {
            last = consumer.status();
            if (last.isPresent() && condition.test(last.get())) {
                return last.get();
            }
            assertThat(agent.isAlive()).as("agent alive while waiting for %s (log %s)", what, agent.log()).isTrue();
            Pause.sleep(Duration.ofMillis(250));
        }
        throw new AssertionError("agent not " + what + " within " + timeout + "; last status " + last + "; log "
                + agent.log());
    }

    /** Runs {@code attack}, then checks the agent fed throughout and reports the feeds it made meanwhile. */
    private static <T> T underAttack(String name, AttackBody<T> attack) throws Exception {
        long since = System.nanoTime();
        long feedsBefore = awaitStatus("answering", s -> true, Duration.ofSeconds(10)).getFeedsTotal();
        T outcome = attack.run();
        AgentStatus after = awaitStatus("armed and feeding after " + name,
                s -> s.getArmed() && s.getQuorumHeld() && s.getFeedsTotal() > feedsBefore, Duration.ofSeconds(10));
        List<ObservedLine> resets = watchdog.lines().stream()
                .filter(l -> l.receivedNanos() >= since && "reset".equals(l.text("event"))).toList();
        assertThat(resets).as("watchdog resets during %s", name).isEmpty();
        assertThat(agent.isAlive()).as("agent alive after %s (log %s)", name, agent.log()).isTrue();
        System.out.printf("gossip-flood: %s: %s; feeds during it %d; agent peak RSS so far %d KiB%n", name, outcome,
                after.getFeedsTotal() - feedsBefore, peakRssKib.get());
        return outcome;
    }

    private interface AttackBody<T> {
        T run() throws Exception;
    }

    @Test
    void agentKeepsFeedingThroughAFloodOf20MiBFrames() throws Exception {
        GossipAttacks.Outcome o = underAttack("20 MiB frames", () -> attacks.hugeFrames(100_000, 10_000));
        assertThat(o.closedByTarget()).as("connections the agent hung up on").isEqualTo(o.attempts());
    }

    @Test
    void agentKeepsFeedingThroughAThousandSlowConnections() throws Exception {
        GossipAttacks.Outcome o = underAttack("1000 slow connections", () -> attacks.slowLoris(1000, 100, 30_000));
        // beyond 16 open streams each is closed at its accept, the rest at the 3 s stream deadline
        assertThat(o.closedByTarget()).as("slow connections the agent closed").isEqualTo(o.attempts());
    }

    @Test
    void agentKeepsFeedingThroughLzwBombs() throws Exception {
        GossipAttacks.Outcome o = underAttack("LZW bombs", () -> attacks.lzwBombs(16_000, 50, 20_000));
        assertThat(o.closedByTarget()).as("bomb streams the agent hung up on").isEqualTo(50);
        assertThat(refusalsFromLog()).containsKey("maxDecompressedBytes");
    }

    @Test
    void agentKeepsFeedingThroughSixteenKeylessMiBFramesDecodedAtOnce() throws Exception {
        FrameVolley o = underAttack("16 keyless 1 MiB frames at once", () -> keylessFrameVolleys(16, 10));
        assertThat(o.delivered()).as("frames sent in full").isPositive();
    }

    /** What {@link #keylessFrameVolleys} achieved. */
    private record FrameVolley(int volleys, int delivered, int refusedEarly, String heap) {
    }

    /**
     * Someone without the key: {@code streams} connections each send the label header and a sealed frame of just under
     * the 1 MiB cap (random bytes: it never authenticates) but its last byte; once all are sent, the last bytes go out
     * together, so the agent decodes them at once. Repeated {@code volleys} times.
     */
    private static FrameVolley keylessFrameVolleys(int streams, int volleys) throws IOException {
        int len = (1 << 20) - 64;
        byte[] label = GROUP.getBytes(StandardCharsets.UTF_8);
        byte[] head = new byte[2 + label.length + 5];
        head[0] = (byte) 244;
        head[1] = (byte) label.length;
        System.arraycopy(label, 0, head, 2, label.length);
        head[2 + label.length] = 10;
        java.nio.ByteBuffer.wrap(head, 3 + label.length, 4).putInt(len);
        byte[] body = new byte[len];
        new java.util.SplittableRandom(20261124L).nextBytes(body);
        body[0] = 1; // encryption version 1
        InetSocketAddress target = attacks.target();
        int delivered = 0;
        int refusedEarly = 0;
        for (int v = 0; v < volleys; v++) {
            List<java.net.Socket> open = new ArrayList<>();
            try {
                for (int i = 0; i < streams; i++) {
                    java.net.Socket s = new java.net.Socket();
                    s.connect(target, 2000);
                    s.setSoTimeout(3000);
                    open.add(s);
                }
                List<java.net.Socket> loaded = new ArrayList<>();
                for (java.net.Socket s : open) {
                    try {
                        s.getOutputStream().write(head);
                        s.getOutputStream().write(body, 0, len - 1);
                        loaded.add(s);
                    } catch (IOException closedByAgent) {
                        refusedEarly++;
                    }
                }
                Pause.sleep(Duration.ofMillis(500)); // the agent reads every body up to its last byte
                for (java.net.Socket s : loaded) {
                    try {
                        s.getOutputStream().write(body, len - 1, 1);
                        delivered++;
                    } catch (IOException closedByAgent) {
                        refusedEarly++;
                    }
                }
                for (java.net.Socket s : loaded) {
                    try {
                        s.getInputStream().read(); // the agent's answer (an error) or its close
                    } catch (IOException ignored) {
                        // a reset is an answer too
                    }
                }
            } finally {
                for (java.net.Socket s : open) {
                    s.close();
                }
            }
        }
        return new FrameVolley(volleys, delivered, refusedEarly, heapFromGcLog());
    }
}
