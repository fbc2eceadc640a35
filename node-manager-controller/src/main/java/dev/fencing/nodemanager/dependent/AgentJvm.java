package dev.fencing.nodemanager.dependent;

import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.util.Map;

/**
 * How the agent JVM is bounded in its pod (ISSUE 9 item 5): an explicit heap, {@code -XX:+ExitOnOutOfMemoryError}
 * (an exhausted heap ends the process instead of leaving a half-working agent; armed, the watchdog then resets the
 * node, disarmed the pod restarts), and a container memory limit that covers everything the flags allow the JVM to
 * use, so the kernel's OOM killer never strikes first. The flags are the agent README's small-footprint set.
 */
public final class AgentJvm {

    /** Environment variable every JVM launcher reads, whatever the image's entrypoint. */
    public static final String ENV = "JAVA_TOOL_OPTIONS";

    /**
     * The agent's JVM options: 64 MiB heap (fencing-agent README's small-footprint flags), direct memory capped
     * below it (Netty and NIO buffers are allocated outside the heap), and exit on heap exhaustion. The heap starts
     * at 8 MiB with a 3 MiB young generation: the idle agent keeps about 6 MiB live, and a larger young generation
     * is only touched pages between collections (bench/REPORT.md, "fencing-agent: idle footprint"). Valid on JDK 17
     * too (jar-run agents); the image's JDK-25-only flags are in its own launcher options.
     */
    public static final String OPTIONS = "-Xms8m -Xmn3m -Xmx64m -XX:MaxDirectMemorySize=32m -XX:MaxMetaspaceSize=64m"
            + " -XX:ReservedCodeCacheSize=16m -Xss256k -XX:+UseSerialGC -XX:TieredStopAtLevel=1"
            + " -XX:CICompilerCount=1 -XX:-UsePerfData -XX:+ExitOnOutOfMemoryError";

    /**
     * The least memory limit that holds what {@link #OPTIONS} allow: heap 64 + direct 32 + metaspace 64 + code
     * cache 16 MiB, plus 16 MiB for thread stacks and the JVM's own native memory.
     */
    public static final Quantity MEMORY_LIMIT = new Quantity("192Mi");

    /** Resource key of the memory limit in {@code --agent-resource}. */
    public static final String LIMIT_KEY = "limits.memory";

    private AgentJvm() {
    }

    /**
     * Checks an {@code --agent-resource} map: a memory limit, when given, must hold the JVM's budget.
     *
     * @return a problem description, or null when the resources fit
     */
    public static String memoryLimitProblem(Map<String, String> agentResources) {
        String limit = agentResources.get(LIMIT_KEY);
        if (limit == null) {
            return null;
        }
        BigDecimal bytes;
        try {
            bytes = Quantity.getAmountInBytes(new Quantity(limit));
        } catch (IllegalArgumentException e) {
            return "--agent-resource " + LIMIT_KEY + "=" + limit + " is not a quantity: " + e.getMessage();
        }
        if (bytes.compareTo(Quantity.getAmountInBytes(MEMORY_LIMIT)) < 0) {
            return "--agent-resource " + LIMIT_KEY + "=" + limit + " is below what the agent JVM may use ("
                    + MEMORY_LIMIT + ": heap 64Mi, direct 32Mi, metaspace 64Mi, code cache 16Mi, native 16Mi);"
                    + " the kernel would kill the agent (and, armed, reset the node) before the JVM's own limit"
                    + " applies: raise it to at least " + MEMORY_LIMIT;
        }
        return null;
    }
}
