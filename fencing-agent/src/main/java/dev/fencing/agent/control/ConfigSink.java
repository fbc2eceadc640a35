package dev.fencing.agent.control;

/** Where the controller client hands every new complete config, on its client thread. */
@FunctionalInterface
public interface ConfigSink {

    /**
     * Takes a config or refuses it.
     *
     * @return true when the agent runs with this config from now on (the client then caches it in the state dir);
     *     false when the agent refused it and keeps the config it had (the cache keeps that one too)
     */
    boolean accept(ConfigUpdate update);
}
