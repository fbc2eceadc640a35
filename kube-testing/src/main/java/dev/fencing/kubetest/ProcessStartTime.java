package dev.fencing.kubetest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The kernel start time of a process, which tells a live owner from a reused pid: the sweepers of the control plane
 * ({@link ControlPlaneRuns}) and of the netns lab record {@code pid start-time} pairs and trust a pid only while its
 * start time still matches.
 */
public final class ProcessStartTime {

    private ProcessStartTime() {
    }

    /** @return field 22 of /proc/pid/stat (clock ticks since boot), empty when there is no such process */
    public static Optional<String> of(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.UTF_8);
            // the command name (field 2) may contain spaces and parentheses: count from the last ')'
            String[] rest = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Optional.of(rest[19]);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
