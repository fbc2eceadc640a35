package dev.fencing.logging;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.core.spi.ContextAwareBase;
import java.util.Map;

/**
 * What holds before a main configures logging, and in the agent's client commands ({@code status}, {@code members},
 * {@code events}): warnings and errors on stderr with {@link FencingLayout}, so stdout stays the command's output.
 *
 * <p>In code rather than a logback.xml: parsing XML (Joran) at every start costs the agent a few MiB of resident
 * memory for nothing. Ranked below logback's own file lookup, so a {@code logback-test.xml} (tests) or a
 * {@code logback.xml} an operator puts on the classpath still wins, and above logback's debug-everything fallback.
 */
@ConfiguratorRank(ConfiguratorRank.NOMINAL - 5)
public final class QuietDefaultConfigurator extends ContextAwareBase implements Configurator {

    /** For logback's ServiceLoader. */
    public QuietDefaultConfigurator() {}

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        LogSetup.configure(context, new LogLevels("warn", Map.of()), LogFormat.TEXT, Map.of());
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }
}
