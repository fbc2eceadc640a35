package dev.fencing.nodemanager.grpc.auth;

/**
 * Makes a string a client sent (node name in a hello, agent version) safe for a key=value log line: quotes,
 * backslashes, control and non-ASCII characters are escaped and the length is capped, so a client cannot forge
 * log lines or fields.
 */
public final class ClientText {

    /** Longer client strings are cut (a Kubernetes name is at most 253 characters). */
    static final int MAX_CHARS = 256;

    private ClientText() {
    }

    /** {@code value} escaped as the inside of a double-quoted log value; null becomes empty. */
    public static String escape(String value) {
        if (value == null) {
            return "";
        }
        StringBuilder out = new StringBuilder(Math.min(value.length(), MAX_CHARS) + 8);
        int n = Math.min(value.length(), MAX_CHARS);
        for (int i = 0; i < n; i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        if (value.length() > n) {
            out.append("...(").append(value.length()).append(" chars)");
        }
        return out.toString();
    }
}
