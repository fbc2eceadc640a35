package dev.fencing.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * One log line per event, as text or as a JSON object, with the logger context's fields ({@code node}, {@code group},
 * {@code replica}, ...) on every line.
 *
 * <p>The fields are read from the logger context's properties at each event, so a field updated with
 * {@link LogSetup#putField} shows on the next line. In text, a field is left out when the message already carries the
 * same {@code key=} (the agent's messages name their node already in places): {@code grep node=n1} finds each line
 * once. JSON always has the fields as members.
 */
public final class FencingLayout extends LayoutBase<ILoggingEvent> {

    private static final DateTimeFormatter TIMESTAMP =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private List<String> fields = List.of();
    private boolean json;

    /** The context properties to show, in order (logback's setter, so a logback.xml can name them: comma-separated). */
    public void setFields(String commaSeparated) {
        List<String> keys = new ArrayList<>();
        for (String key : commaSeparated.split(",")) {
            if (!key.isBlank()) {
                keys.add(key.strip());
            }
        }
        fields = List.copyOf(keys);
    }

    /** {@code text} or {@code json}. */
    public void setFormat(String format) {
        json = LogFormat.parse(format) == LogFormat.JSON;
    }

    @Override
    public String doLayout(ILoggingEvent event) {
        StringBuilder b = new StringBuilder(160);
        String ts = TIMESTAMP.format(Instant.ofEpochMilli(event.getTimeStamp()));
        String message = event.getFormattedMessage();
        IThrowableProxy thrown = event.getThrowableProxy();
        if (json) {
            b.append("{\"ts\":\"").append(ts).append('"');
            member(b, "level", event.getLevel().toString());
            member(b, "thread", event.getThreadName());
            member(b, "logger", event.getLoggerName());
            for (String key : fields) {
                String value = value(key);
                if (value != null) {
                    member(b, key, value);
                }
            }
            member(b, "msg", message);
            if (thrown != null) {
                member(b, "stack", ThrowableProxyUtil.asString(thrown));
            }
            return b.append('}').append(CoreConstants.LINE_SEPARATOR).toString();
        }
        b.append(ts).append(' ');
        String level = event.getLevel().toString();
        b.append(level).append(" ".repeat(Math.max(0, 5 - level.length())));
        b.append(" [").append(event.getThreadName()).append("] ").append(event.getLoggerName());
        for (String key : fields) {
            String value = value(key);
            if (value != null && !carries(message, key)) {
                b.append(' ').append(key).append('=').append(value);
            }
        }
        b.append(" - ").append(message).append(CoreConstants.LINE_SEPARATOR);
        if (thrown != null) {
            b.append(ThrowableProxyUtil.asString(thrown)).append(CoreConstants.LINE_SEPARATOR);
        }
        return b.toString();
    }

    private String value(String key) {
        return getContext() == null ? null : getContext().getProperty(key);
    }

    private static boolean carries(String message, String key) {
        return message != null && (message.startsWith(key + "=") || message.contains(" " + key + "="));
    }

    private static void member(StringBuilder b, String key, String value) {
        b.append(",\"");
        escape(b, key);
        b.append("\":\"");
        escape(b, value == null ? "" : value);
        b.append('"');
    }

    private static void escape(StringBuilder b, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
    }
}
