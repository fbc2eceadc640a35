package dev.fencing.e2e.agent;

import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.HostCommand;
import dev.fencing.e2e.process.JsonLinesProcess;
import dev.fencing.e2e.process.ObservedLine;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Go example consumer ({@code proto/go/examples/consumer}, what Cilium would do: GetAll, StreamEvents, backoff
 * and resync) run as a child process next to an agent, reading the agent's socket from the host. It prints one JSON
 * line per SYNC and per event with {@code received}, its own wall-clock receive time, which this class compares with
 * a wall-clock fault time.
 */
public final class GoFencingConsumer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GoFencingConsumer.class);
    private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(10);

    private final String node;
    private final JsonLinesProcess process;

    private GoFencingConsumer(String node, JsonLinesProcess process) {
        this.node = node;
        this.process = process;
    }

    /**
     * Builds the consumer with the Go that {@code scripts/go-toolchain} finds (≥ 1.26, as {@code proto/go/go.mod}
     * needs) from the checked-in module and its go.sum ({@code -mod=readonly}; modules come from the Go module
     * proxy or the module cache).
     *
     * @return {@code e2e/target/go-consumer}
     */
    public static synchronized Path build(ProjectLayout layout) {
        String go = HostCommand.check(List.of(layout.repoRoot().resolve("scripts/go-toolchain").toString()),
                BUILD_TIMEOUT).strip();
        Path binary = layout.e2eTarget().resolve("go-consumer");
        long started = System.nanoTime();
        HostCommand.check(List.of("env", "GOFLAGS=-mod=readonly -buildvcs=false", "CGO_ENABLED=0",
                go, "-C", layout.repoRoot().resolve("proto/go").toString(), "build", "-trimpath",
                "-o", binary.toString(), "./examples/consumer"), BUILD_TIMEOUT);
        LOG.info("event=go-consumer-built binary={} millis={}", binary, (System.nanoTime() - started) / 1_000_000);
        return binary;
    }

    /**
     * Starts the consumer of {@code node}'s agent at {@code socket}; stderr goes to
     * {@code logDir/go-consumer-<node>.err}.
     */
    public static GoFencingConsumer start(String node, Path binary, Path socket, Path logDir) {
        return new GoFencingConsumer(node, JsonLinesProcess.start("go-consumer-" + node, List.of(binary.toString(),
                "-socket", socket.toString(), "-initial-backoff", "100ms", "-max-backoff", "1s"), logDir));
    }

    /** @return the node whose agent this consumer reads */
    public String node() {
        return node;
    }

    /** Waits for a SYNC (the GetAll answer) listing {@code member}. */
    public void awaitSyncWith(String member, Duration timeout) {
        process.await("SYNC with " + member, l -> "SYNC".equals(l.text("event")) && l.json().has("nodes")
                && l.json().get("nodes").toString().contains("\"" + member + "\""), timeout);
    }

    /**
     * Waits for a SYNC (a GetAll answer, which the consumer asks for after every reconnect) received at or after
     * {@code since} by the consumer's clock.
     *
     * @return when the consumer received it
     */
    public Instant awaitSyncSince(Instant since, Duration timeout) {
        return received(process.await("SYNC since " + since,
                l -> "SYNC".equals(l.text("event")) && !received(l).isBefore(since), timeout));
    }

    /**
     * Waits for a live (non-snapshot) event of {@code type} about {@code member} that the consumer received at or
     * after {@code since} by its own clock.
     *
     * @return when the consumer received it
     */
    public Instant awaitLive(String type, String member, Instant since, Duration timeout) {
        ObservedLine line = process.await(type + " of " + member, l -> isLive(l, type, member)
                && !received(l).isBefore(since), timeout);
        return received(line);
    }

    /** @return "TYPE member" of every live event received at or after {@code since}, in arrival order */
    public List<String> liveEventsSince(Instant since) {
        List<String> out = new ArrayList<>();
        for (ObservedLine l : process.lines()) {
            String event = l.text("event");
            if (("JOIN".equals(event) || "LEFT".equals(event)) && !"snapshot".equals(l.text("source"))
                    && !received(l).isBefore(since)) {
                out.add(event + " " + l.text("node"));
            }
        }
        return out;
    }

    private static boolean isLive(ObservedLine l, String type, String member) {
        return type.equals(l.text("event")) && member.equals(l.text("node")) && !"snapshot".equals(l.text("source"));
    }

    private static Instant received(ObservedLine l) {
        return OffsetDateTime.parse(l.text("received")).toInstant();
    }

    @Override
    public void close() {
        process.close();
    }
}
