package dev.fencing.e2e.agent;

import dev.fencing.e2e.peer.ProjectLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How to start the agent's JVM entry points, in this order of preference: an explicit classpath in the system
 * property {@value #CLASSPATH_PROPERTY} (development against an unpackaged agent); the executable jar
 * {@code fencing-agent/target/fencing-agent-<version>.jar} run with {@code java -jar}; or the classpath of this JVM,
 * which holds the agent and its dependencies because e2e depends on fencing-agent (the reactor build).
 *
 * @param jar       the executable agent jar, or null when a classpath is given
 * @param classpath the explicit classpath, or null
 */
public record AgentLauncher(Path jar, String classpath) {

    /**
     * JVM flags every agent the harness starts runs with, as in production (the DaemonSet): an explicit 64 MiB heap,
     * which the gossip caps keep far from full (memberlist README, "Resource limits"), and an immediate exit on
     * OutOfMemoryError, so a heap exhausted anyway ends the process (the watchdog then resets an armed node) instead
     * of leaving it half-working.
     */
    public static final List<String> AGENT_JVM_OPTIONS = List.of("-Xms16m", "-Xmx64m", "-XX:+ExitOnOutOfMemoryError",
            "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k");

    /** System property holding an explicit agent classpath (development aid; CI uses the packaged jar). */
    public static final String CLASSPATH_PROPERTY = "fencing.e2e.agent.classpath";
    private static final String CLI_MAIN = "dev.fencing.agent.cli.FencingAgentCli";
    private static final String EMULATOR_MAIN = "dev.fencing.agent.emulator.SoftdogEmulator";

    /**
     * @return the first usable way to start the agent
     * @throws IllegalStateException saying what is missing and how to build it
     */
    public static AgentLauncher locate(ProjectLayout layout) {
        String classpath = System.getProperty(CLASSPATH_PROPERTY, "");
        if (!classpath.isBlank()) {
            return new AgentLauncher(null, classpath);
        }
        try {
            return new AgentLauncher(AgentJar.locate(layout), null);
        } catch (IllegalStateException noExecutableJar) {
            if (onOwnClasspath()) {
                return new AgentLauncher(null, System.getProperty("java.class.path"));
            }
            throw new IllegalStateException(noExecutableJar.getMessage() + "; and the agent classes are not on this "
                    + "JVM's classpath either (run the reactor build: ./mvnw verify)", noExecutableJar);
        }
    }

    private static boolean onOwnClasspath() {
        try {
            Class.forName(CLI_MAIN, false, AgentLauncher.class.getClassLoader());
            Class.forName(EMULATOR_MAIN, false, AgentLauncher.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /** @return the arguments after {@code java [jvm flags]} that run the agent CLI */
    public List<String> agentCli() {
        return jar != null ? List.of("-jar", jar.toString()) : List.of("-cp", classpath, CLI_MAIN);
    }

    /** @return the arguments after {@code java [jvm flags]} that run the softdog emulator */
    public List<String> softdogEmulator() {
        List<String> args = new ArrayList<>(List.of("-cp", jar != null ? jar.toString() : classpath));
        args.add(EMULATOR_MAIN);
        return args;
    }
}
