package dev.fencing.e2e.peer;

import java.util.ArrayList;
import java.util.List;

/**
 * The command-line contract shared by the Java node jar and the Go peer:
 * {@code --name N --bind A --port P [--join H:P,…] [--key B64] [--config lan|wan|local] [--state TEXT] [extra…]}.
 *
 * @param name      node name, unique in the cluster
 * @param bind      address to bind and advertise
 * @param port      UDP and TCP port
 * @param join      seeds as host:port, empty to start a new cluster
 * @param key       base64 AES key, "" for plaintext gossip
 * @param config    memberlist base configuration: lan, wan or local
 * @param state     local state text exchanged in push/pull, "" for none
 * @param extraArgs further flags, e.g. {@code --probe-interval 500ms}
 */
public record PeerSpec(String name, String bind, int port, List<String> join, String key, String config, String state,
                       List<String> extraArgs) {

    public PeerSpec {
        join = List.copyOf(join);
        extraArgs = List.copyOf(extraArgs);
    }

    /** A plaintext node with the {@code local} config and no seeds. */
    public static PeerSpec of(String name, String bind, int port) {
        return new PeerSpec(name, bind, port, List.of(), "", "local", "", List.of());
    }

    /** @return this spec joining through the given seeds */
    public PeerSpec joining(List<String> seeds) {
        return new PeerSpec(name, bind, port, seeds, key, config, state, extraArgs);
    }

    /** @return this spec with an encryption key */
    public PeerSpec withKey(String base64Key) {
        return new PeerSpec(name, bind, port, join, base64Key, config, state, extraArgs);
    }

    /** @return this spec with another base configuration */
    public PeerSpec withConfig(String configName) {
        return new PeerSpec(name, bind, port, join, key, configName, state, extraArgs);
    }

    /** @return this spec with push/pull local state */
    public PeerSpec withState(String text) {
        return new PeerSpec(name, bind, port, join, key, config, text, extraArgs);
    }

    /** @return this spec with extra flags appended */
    public PeerSpec withExtraArgs(List<String> args) {
        List<String> all = new ArrayList<>(extraArgs);
        all.addAll(args);
        return new PeerSpec(name, bind, port, join, key, config, state, all);
    }

    /** @return host:port other nodes use to join this one */
    public String address() {
        return bind + ":" + port;
    }

    /** @return the command-line arguments, identical for both implementations */
    public List<String> arguments() {
        List<String> args = new ArrayList<>(List.of("--name", name, "--bind", bind, "--port", String.valueOf(port),
                "--config", config));
        if (!join.isEmpty()) {
            args.add("--join");
            args.add(String.join(",", join));
        }
        if (!key.isEmpty()) {
            args.add("--key");
            args.add(key);
        }
        if (!state.isEmpty()) {
            args.add("--state");
            args.add(state);
        }
        args.addAll(extraArgs);
        return args;
    }
}
