package dev.fencing.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.FileAppender;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import java.nio.file.Path;
import java.util.Map;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * Configures logback for a long-running main ({@code fencing-agent run}, the controller): one appender on stderr
 * with {@link FencingLayout}, the levels from {@code --log-level}, the context fields on every line.
 *
 * <p>Levels are set at start from the flag; there is no runtime reload (no JMX, no scanned file): a level change is a
 * restart, which for the agent is a DaemonSet roll the controller does when {@code --agent-log-level} changes.
 */
public final class LogSetup {

    private static final String NETTY_BOOTSTRAP = "io.grpc.netty.shaded.io.netty.bootstrap";

    private LogSetup() {}

    /**
     * Replaces the logging configuration.
     *
     * @param levels root and per-logger levels
     * @param format text or JSON lines
     * @param fields context fields on every line, in order (e.g. {@code node}, {@code group}); a field whose value
     *               is null is left out until {@link #putField} sets it
     */
    public static void configure(LogLevels levels, LogFormat format, Map<String, String> fields) {
        configure(context(), levels, format, fields);
    }

    /** Configures {@code context} (logback's own, while it initialises) to stderr. */
    static void configure(LoggerContext context, LogLevels levels, LogFormat format, Map<String, String> fields) {
        ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
        appender.setName("stderr");
        appender.setTarget("System.err");
        configure(context, levels, format, fields, appender);
    }

    /**
     * Replaces the logging configuration, writing to a file instead of stderr (the e2e demo keeps the terminal for
     * its story).
     *
     * @param file appended to, created if missing
     */
    public static void configure(LogLevels levels, LogFormat format, Map<String, String> fields, Path file) {
        FileAppender<ILoggingEvent> appender = new FileAppender<>();
        appender.setName("file");
        appender.setFile(file.toString());
        appender.setAppend(true);
        configure(context(), levels, format, fields, appender);
    }

    private static void configure(LoggerContext context, LogLevels levels, LogFormat format,
            Map<String, String> fields, OutputStreamAppender<ILoggingEvent> appender) {
        context.reset();
        fields.forEach((key, value) -> {
            if (value != null) {
                context.putProperty(key, value);
            }
        });
        FencingLayout layout = new FencingLayout();
        layout.setContext(context);
        layout.setFields(String.join(",", fields.keySet()));
        layout.setFormat(format.name());
        layout.start();
        LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
        encoder.setContext(context);
        encoder.setLayout(layout);
        encoder.start();
        appender.setContext(context);
        appender.setEncoder(encoder);
        appender.start();
        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.addAppender(appender);
        root.setLevel(Level.toLevel(levels.root()));
        // grpc-netty logs a harmless WARN per connection for SO_KEEPALIVE on Unix sockets
        context.getLogger(NETTY_BOOTSTRAP).setLevel(Level.ERROR);
        levels.loggers().forEach((name, level) -> context.getLogger(name).setLevel(Level.toLevel(level)));
    }

    /** Sets a context field shown on every following line (the agent's {@code group} when its config changes). */
    public static void putField(String key, String value) {
        context().putProperty(key, value);
    }

    private static LoggerContext context() {
        ILoggerFactory factory = LoggerFactory.getILoggerFactory();
        if (factory instanceof LoggerContext context) {
            return context;
        }
        throw new IllegalStateException("the SLF4J backend is " + factory.getClass().getName()
                + ", not logback: another binding is on the classpath");
    }
}
