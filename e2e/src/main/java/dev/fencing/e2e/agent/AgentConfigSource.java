package dev.fencing.e2e.agent;

import java.nio.file.Path;
import java.util.List;

/**
 * Where an agent gets its group, expected members and policy: a standalone file ({@code run --config FILE}) or the
 * node-manager controller ({@code run --controller ADDR}, no file at all).
 *
 * @param flag  the {@code run} option naming the source
 * @param value its argument
 */
public record AgentConfigSource(String flag, String value) {

    /** @return a source reading {@code file}, the standalone agent config */
    public static AgentConfigSource standaloneFile(Path file) {
        return new AgentConfigSource("--config", file.toString());
    }

    /** @return a source that is the controller's AgentControl server at {@code address} ({@code host:port}) */
    public static AgentConfigSource controller(String address) {
        return new AgentConfigSource("--controller", address);
    }

    /** @return the arguments of {@code run} that select this source */
    List<String> runArgs() {
        return List.of(flag, value);
    }
}
