package dev.fencing.e2e.agent;

import dev.fencing.e2e.peer.ProjectLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How to start the agent's JVM entry points: normally from the executable jar
 * ({@code java -jar fencing-agent/target/fencing-agent-<version>.jar}); for development against an unpackaged agent,
 * from an explicit classpath given in the system property {@value #CLASSPATH_PROPERTY}.
 *
 * @param jar       the executable agent jar, or null when a classpath is given
 * @param classpath the explicit classpath, or null
 */
public record AgentLauncher(Path jar, String classpath) {

    /** System property holding an explicit agent classpath (development aid; CI uses the packaged jar). */
    public static final String CLASSPATH_PROPERTY = "fencing.e2e.agent.classpath";
    private static final String CLI_MAIN = "dev.fencing.agent.cli.FencingAgentCli";
    private static final String EMULATOR_MAIN = "dev.fencing.agent.emulator.SoftdogEmulator";

    /** @return the launcher from the system property if set, else from the packaged jar */
    public static AgentLauncher locate(ProjectLayout layout) {
        String classpath = System.getProperty(CLASSPATH_PROPERTY, "");
        if (!classpath.isBlank()) {
            return new AgentLauncher(null, classpath);
        }
        return new AgentLauncher(AgentJar.locate(layout), null);
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
