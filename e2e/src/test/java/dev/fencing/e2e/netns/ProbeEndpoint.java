package dev.fencing.e2e.netns;

import dev.fencing.e2e.process.JsonLinesProcess;
import dev.fencing.e2e.process.ObservedLine;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** Drives a {@link UdpProbe} running inside one lab node. */
final class ProbeEndpoint {

    static final int PORT = 7000;
    private static final Duration STEP_TIMEOUT = Duration.ofSeconds(30);

    private final LabNode node;
    private final String address;
    private final JsonLinesProcess process;

    private ProbeEndpoint(LabNode node, String address, JsonLinesProcess process) {
        this.node = node;
        this.address = address;
        this.process = process;
    }

    static ProbeEndpoint start(NetnsLab lab, String nodeName, Path logDir) {
        return start(lab, nodeName, logDir, 0);
    }

    /** A probe bound to {@code nodeName}'s address on lab network {@code network}. */
    static ProbeEndpoint start(NetnsLab lab, String nodeName, Path logDir, int network) {
        LabNode node = lab.node(nodeName);
        String address = lab.address(nodeName, network);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        JsonLinesProcess process = lab.start(nodeName, "probe-" + nodeName + "-net" + network, List.of(java,
                "-Xmx32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                UdpProbe.class.getName(), address, String.valueOf(PORT)), logDir);
        process.await("probe ready", line -> "ready".equals(line.text("event")), STEP_TIMEOUT);
        return new ProbeEndpoint(node, address, process);
    }

    LabNode node() {
        return node;
    }

    JsonLinesProcess process() {
        return process;
    }

    /** Sends {@code count} pings to {@code target} and waits until they are out (and replies had time to return). */
    void ping(ProbeEndpoint target, int count) {
        long since = System.nanoTime();
        String to = target.address + ":" + PORT;
        process.writeLine("{\"send\":\"" + to + "\",\"count\":" + count + "}");
        process.await("pings sent to " + to, line -> line.receivedNanos() >= since
                && "sent".equals(line.text("event")) && to.equals(line.text("to")), STEP_TIMEOUT);
    }

    /** @return how many pings this endpoint has received from {@code from} */
    int pingsFrom(ProbeEndpoint from) {
        return report().json().path("pings").path(from.address).asInt(0);
    }

    /** @return how many pongs this endpoint has received from {@code from} */
    int pongsFrom(ProbeEndpoint from) {
        return report().json().path("pongs").path(from.address).asInt(0);
    }

    private ObservedLine report() {
        long since = System.nanoTime();
        process.writeLine("{\"report\":true}");
        return process.await("report", line -> line.receivedNanos() >= since && "report".equals(line.text("event")),
                STEP_TIMEOUT);
    }
}
