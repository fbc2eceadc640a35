package dev.fencing.e2e.peer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * Reads the Go peer's memberlist log (its stderr) for complaints about what it received — the signs that a Java
 * node sent something the Go library could not decode. Network-level failures after a crash ("connection refused",
 * "Failed fallback ping") are not complaints: they are the expected consequence of a test's fault.
 */
public final class GoPeerLog {

    private static final List<String> WIRE_COMPLAINTS = List.of(
            "Failed to decode", "Failed to decompress", "Decrypt packet failed", "not supported",
            "invalid msgType", "Failed push/pull merge", "Failed to read remote state",
            "Failed to receive user message", "truncated messages", "invalid checksum",
            "Got ping for unexpected node", "Conflicting address", "panic:",
            // memberlist >= 0.3: label refusals
            "unacceptable label", "unexpected double");

    private GoPeerLog() {
    }

    /** @return the log lines of {@code stderrLog} that report undecodable or conflicting input */
    public static List<String> wireComplaints(Path stderrLog) {
        return wireComplaints(stderrLog, List.of());
    }

    /** Like {@link #wireComplaints(Path)}, ignoring complaints containing any of {@code expected}. */
    public static List<String> wireComplaints(Path stderrLog, List<String> expected) {
        if (!Files.exists(stderrLog)) {
            return List.of();
        }
        try (Stream<String> lines = Files.lines(stderrLog, StandardCharsets.UTF_8)) {
            return lines.filter(line -> WIRE_COMPLAINTS.stream().anyMatch(line::contains))
                    .filter(line -> expected.stream().noneMatch(line::contains))
                    .toList();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + stderrLog + ": " + e.getMessage(), e);
        }
    }
}
