package dev.fencing.e2e.controlplane;

import dev.fencing.e2e.agent.AgentNode;
import dev.fencing.e2e.agent.FencingConsumer;
import dev.fencing.e2e.process.JsonLinesProcess;
import dev.fencing.e2e.process.LoggedProcess;
import dev.fencing.e2e.process.ObservedLine;
import dev.fencing.proto.fencing.v1.AgentStatus;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The former name of an {@link AgentNode} configured by the controller, kept only so that
 * {@code ControlPlaneTieBreakIT} compiles while it is being rewritten; every call goes to the {@link AgentNode}.
 *
 * @deprecated use {@link AgentNode}
 */
@Deprecated
public final class ControlledAgent {

    private final AgentNode node;

    ControlledAgent(AgentNode node) {
        this.node = node;
    }

    /** @return the node this stands for */
    public AgentNode node() {
        return node;
    }

    public String name() {
        return node.name();
    }

    public Path disableFile() {
        return node.disableFile();
    }

    public void boot() {
        node.boot();
    }

    public Optional<AgentStatus> status() {
        return node.status();
    }

    public boolean running() {
        return node.running();
    }

    public LoggedProcess agent() {
        return node.agent();
    }

    public JsonLinesProcess watchdog() {
        return node.watchdog();
    }

    public FencingConsumer consumer() {
        return node.consumer();
    }

    public List<ObservedLine> watchdogEvents(String event, long sinceNanos) {
        return node.watchdogEvents(event, sinceNanos);
    }

    public int boots() {
        return node.boots();
    }
}
