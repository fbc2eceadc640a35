package dev.fencing.e2e.agent;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Where an agent gets its group, expected members and policy: a standalone file ({@code run --config FILE}) or the
 * node-manager controller ({@code run --controller ADDR}, no file at all), reached over TLS with the node's own
 * token.
 *
 * @param flag         the {@code run} option naming the source
 * @param value        its argument
 * @param channelArgs  further {@code run} options for the controller channel ({@code --controller-ca}, ...)
 * @param tokenDir     with a controller: the directory holding one projected-token file per node, named after it
 */
public record AgentConfigSource(String flag, String value, List<String> channelArgs, Optional<Path> tokenDir) {

    /** Copies. */
    public AgentConfigSource {
        channelArgs = List.copyOf(channelArgs);
    }

    /** @return a source reading {@code file}, the standalone agent config */
    public static AgentConfigSource standaloneFile(Path file) {
        return new AgentConfigSource("--config", file.toString(), List.of(), Optional.empty());
    }

    /**
     * @return a source that is the controller's AgentControl server at {@code address} ({@code host:port}), dialed
     *     with {@code channelArgs}; each node presents the token in {@code tokenDir/<node>}
     */
    public static AgentConfigSource controller(String address, List<String> channelArgs, Path tokenDir) {
        return new AgentConfigSource("--controller", address, channelArgs, Optional.of(tokenDir));
    }

    /** @return the arguments of {@code run} that select this source for {@code node} */
    List<String> runArgs(String node) {
        List<String> args = new ArrayList<>(List.of(flag, value));
        args.addAll(channelArgs);
        tokenDir.ifPresent(dir -> args.addAll(List.of("--token-file", dir.resolve(node).toString())));
        return args;
    }
}
