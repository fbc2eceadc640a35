package dev.fencing.e2e.peer;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencing.e2e.process.JsonLinesProcess;
import dev.fencing.e2e.process.ObservedLine;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/** A running gossip node (Java or Go) and what it has printed. */
public final class GossipPeer implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final PeerKind kind;
    private final PeerSpec spec;
    private final JsonLinesProcess process;

    GossipPeer(PeerKind kind, PeerSpec spec, JsonLinesProcess process) {
        this.kind = kind;
        this.spec = spec;
        this.process = process;
    }

    public PeerKind kind() {
        return kind;
    }

    public PeerSpec spec() {
        return spec;
    }

    public String name() {
        return spec.name();
    }

    /** @return the underlying process, for signals, pid and raw lines */
    public JsonLinesProcess process() {
        return process;
    }

    @Override
    public String toString() {
        return kind + ":" + spec.name();
    }

    /** Waits for the {@code ready} line. */
    public ObservedLine awaitReady(Duration timeout) {
        return process.await("ready event", line -> "ready".equals(line.text("event")), timeout);
    }

    /** @return the latest members view, if one was printed */
    public Optional<MembersView> latestView() {
        return process.last(line -> "members".equals(line.text("event"))).map(MembersView::from);
    }

    /** Waits for a members view read after {@code sinceNanos} (a {@link System#nanoTime()} value) matching {@code test}. */
    public MembersView awaitView(String what, long sinceNanos, Predicate<MembersView> test, Duration timeout) {
        return MembersView.from(process.await(what, line -> line.receivedNanos() >= sinceNanos
                && "members".equals(line.text("event")) && test.test(MembersView.from(line)), timeout));
    }

    /** @return the first {@code event} line about {@code node} read after {@code sinceNanos} */
    public Optional<ObservedLine> firstEvent(String event, String node, long sinceNanos) {
        return process.first(line -> line.receivedNanos() >= sinceNanos && event.equals(line.text("event"))
                && node.equals(line.text("node")));
    }

    /** Waits for an {@code event} line (join, leave, update) about {@code node} read after {@code sinceNanos}. */
    public ObservedLine awaitEvent(String event, String node, long sinceNanos, Duration timeout) {
        return process.await(event + " of " + node, line -> line.receivedNanos() >= sinceNanos
                && event.equals(line.text("event")) && node.equals(line.text("node")), timeout);
    }

    /** Asks the node to send a user message to {@code target} (reliable = over TCP, else one UDP packet). */
    public void sendUserMessage(String target, String message, boolean reliable) {
        ObjectNode command = JSON.createObjectNode();
        command.put("send", target);
        command.put("msg", message);
        command.put("reliable", reliable);
        process.writeLine(command.toString());
    }

    /** Replaces the push/pull state the node sends from now on (stdin {@code {"state":…}}). */
    public void setState(String state) {
        ObjectNode command = JSON.createObjectNode();
        command.put("state", state);
        process.writeLine(command.toString());
    }

    /** Replaces the node's metadata and broadcasts it (stdin {@code {"meta":…}}); peers print an update line. */
    public void setMeta(String meta) {
        ObjectNode command = JSON.createObjectNode();
        command.put("meta", meta);
        process.writeLine(command.toString());
    }

    /**
     * Queues {@code count} distinct 2-character user broadcasts ("00", "01", … in base 36) that the node hands to
     * memberlist's gossip (stdin {@code {"broadcasts":N}}); more than 255 fit in one packet's budget.
     */
    public void queueBroadcasts(int count) {
        ObjectNode command = JSON.createObjectNode();
        command.put("broadcasts", count);
        process.writeLine(command.toString());
    }

    /** Waits for a user message with exactly {@code message} as its text. */
    public ObservedLine awaitUserMessage(String message, Duration timeout) {
        return process.await("user message \"" + abbreviate(message) + "\"",
                line -> "user".equals(line.text("event")) && message.equals(line.text("msg")), timeout);
    }

    /** Waits for merged remote push/pull state equal to {@code state}. */
    public ObservedLine awaitRemoteState(String state, Duration timeout) {
        return process.await("remote state \"" + abbreviate(state) + "\"",
                line -> "state".equals(line.text("event")) && state.equals(line.text("state")), timeout);
    }

    /** Waits for remote state {@code state} merged by a periodic (not a join) push/pull exchange. */
    public ObservedLine awaitPeriodicRemoteState(String state, Duration timeout) {
        return process.await("periodic push/pull with state \"" + abbreviate(state) + "\"",
                line -> "state".equals(line.text("event")) && state.equals(line.text("state"))
                        && !line.json().path("join").asBoolean(true), timeout);
    }

    /** @return every line printed so far */
    public List<ObservedLine> lines() {
        return process.lines();
    }

    private static String abbreviate(String text) {
        return text.length() <= 40 ? text : text.substring(0, 37) + "...";
    }

    /** SIGKILL: a crash without a leave message. */
    public void crash() {
        process.kill();
    }

    /**
     * SIGTERM: graceful leave, then exit.
     *
     * @return the exit code (0 expected), -1 when it had to be killed
     */
    public int leave(Duration grace) {
        return process.terminate(grace);
    }

    @Override
    public void close() {
        process.close();
    }
}
