package dev.fencing.e2e.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Resident memory and consumed CPU time of a process, read from {@code /proc}.
 *
 * @param rssKib     resident set size (VmRSS) in KiB
 * @param cpuSeconds user + system CPU time consumed since the process started
 */
public record ProcessStats(long rssKib, double cpuSeconds) {

    private static final long CLOCK_TICKS = clockTicks();

    /**
     * @return the current figures of {@code pid}
     * @throws IllegalStateException when the process is gone
     */
    public static ProcessStats of(long pid) {
        try {
            Path proc = Path.of("/proc", String.valueOf(pid));
            long rss = 0;
            for (String line : Files.readAllLines(proc.resolve("status"), StandardCharsets.UTF_8)) {
                if (line.startsWith("VmRSS:")) {
                    rss = Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
            String stat = Files.readString(proc.resolve("stat"), StandardCharsets.UTF_8);
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
            return new ProcessStats(rss, (double) ticks / CLOCK_TICKS);
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("cannot read /proc/" + pid + " (process gone?): " + e.getMessage(), e);
        }
    }

    private static long clockTicks() {
        CommandResult result = HostCommand.run(List.of("getconf", "CLK_TCK"), Duration.ofSeconds(5));
        return result.ok() ? Long.parseLong(result.stdout().strip()) : 100;
    }
}
