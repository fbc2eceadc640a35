package dev.fencing.kubetest;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real BMC for tests: OpenIPMI's {@code ipmi_sim} (Debian {@code openipmi}) on a loopback UDP port, with one admin
 * user, IPMI 1.5 and 2.0 (lanplus) access, and a chassis-control hook: the sim's power state lives in a file, and a
 * power-off runs {@code onPowerOff} (a shell command, e.g. killing the simulated node's processes).
 */
public final class IpmiSimulator implements AutoCloseable {

    /** OpenIPMI's simulator binary. */
    public static final String IPMI_SIM = "/usr/bin/ipmi_sim";
    /** The one admin user the simulator knows. */
    public static final String USER = "admin";

    private final Path dir;
    private final int port;
    private final String password;
    private final Process process;
    /** What runs the sim and its probe where it lives (ip netns exec …), empty on the host. */
    private final List<String> prefix;

    private IpmiSimulator(Path dir, int port, String password, Process process, List<String> prefix) {
        this.dir = dir;
        this.prefix = List.copyOf(prefix);
        this.port = port;
        this.password = password;
        this.process = process;
    }

    /**
     * Starts a simulator in {@code dir} (its config, state and hook live there).
     *
     * @param password   the admin user's password
     * @param onPowerOff shell command run when the chassis is powered off
     */
    public static IpmiSimulator start(Path dir, String password, String onPowerOff) throws IOException {
        int port;
        try (DatagramSocket probe = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        return start(dir, password, onPowerOff, List.of(), port);
    }

    /**
     * Starts a simulator inside the network namespace {@code netns} (a name under {@code /run/netns}) on its
     * loopback, UDP {@code port}: the BMC of a lab node that a process in that namespace (e.g. the controller)
     * reaches at {@code 127.0.0.1:port}. Its hooks run on the host's process table, so they may signal any process.
     *
     * @param onPowerOff shell command run when the chassis is powered off
     */
    public static IpmiSimulator startInNetworkNamespace(String netns, int port, Path dir, String password,
                                                        String onPowerOff) throws IOException {
        return start(dir, password, onPowerOff, List.of("ip", "netns", "exec", netns), port);
    }

    private static IpmiSimulator start(Path dir, String password, String onPowerOff, List<String> prefix, int port)
            throws IOException {
        if (!Files.isExecutable(Path.of(IPMI_SIM)) || !Files.isExecutable(Path.of("/usr/bin/ipmitool"))) {
            throw new IllegalStateException(IPMI_SIM + " and /usr/bin/ipmitool are needed (Debian openipmi and "
                    + "ipmitool; scripts/test installs them)");
        }
        Files.createDirectories(dir.resolve("state"));
        Files.writeString(dir.resolve("power"), "1\n");
        Path onOff = dir.resolve("on-power-off");
        Files.writeString(onOff, "#!/bin/sh\n" + onPowerOff + "\n");
        Path hook = dir.resolve("chassis-control");
        // ipmi_sim runs "<hook> <mc> get power" and "<hook> <mc> set power 0|1" (ipmi_lan(5), chassis_control).
        Files.writeString(hook, """
                #!/bin/sh
                dir=%1$s
                shift
                op=$1
                shift
                case "$op" in
                  get)
                    for p in "$@"; do
                      case "$p" in
                        power) echo "power:$(cat "$dir/power")" ;;
                        boot) echo "boot:default" ;;
                        *) echo "Invalid parameter: $p"; exit 1 ;;
                      esac
                    done ;;
                  set)
                    while [ $# -ge 2 ]; do
                      if [ "$1" = power ]; then
                        echo "$2" > "$dir/power"
                        echo "power $2" >> "$dir/events"
                        if [ "$2" = 0 ]; then "$dir/on-power-off"; fi
                      fi
                      shift 2
                    done ;;
                  *) exit 1 ;;
                esac
                """.formatted(dir));
        for (Path p : List.of(onOff, hook)) {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        Files.writeString(dir.resolve("lan.conf"), """
                name "fencing-test"
                set_working_mc 0x20
                  startlan 1
                    addr 127.0.0.1 %d
                    priv_limit admin
                    allowed_auths_callback none md2 md5 straight
                    allowed_auths_user none md2 md5 straight
                    allowed_auths_operator none md2 md5 straight
                    allowed_auths_admin none md2 md5 straight
                    guid a123456789abcdefa123456789abcdef
                  endlan
                  chassis_control "%s 0x20"
                  user 2 true "%s" "%s" admin 10 none md2 md5 straight
                """.formatted(port, hook, USER, password));
        Files.writeString(dir.resolve("emu.cmds"), """
                mc_setbmc 0x20
                mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr
                mc_enable 0x20
                """);
        List<String> command = new ArrayList<>(prefix);
        command.addAll(List.of(IPMI_SIM, "-c", dir.resolve("lan.conf").toString(), "-f",
                dir.resolve("emu.cmds").toString(), "-s", dir.resolve("state").toString(), "-n"));
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("ipmi_sim.log").toFile()).start();
        IpmiSimulator sim = new IpmiSimulator(dir, port, password, process, prefix);
        try {
            sim.awaitAnswering(Duration.ofSeconds(20));
        } catch (IOException | RuntimeException e) {
            sim.close();
            throw e;
        }
        return sim;
    }

    /** @return the UDP port the simulator answers on (127.0.0.1, in its network namespace) */
    public int port() {
        return port;
    }

    /** "1" (on) or "0" (off), as the chassis hook holds it. */
    public String power() throws IOException {
        return Files.readString(dir.resolve("power")).strip();
    }

    /** The power changes the hook saw, e.g. {@code [power 0, power 1]}. */
    public List<String> events() throws IOException {
        Path events = dir.resolve("events");
        return Files.exists(events) ? Files.readAllLines(events) : List.of();
    }

    private void awaitAnswering(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (!answers()) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("ipmi_sim did not answer ipmitool within " + timeout + ": "
                            + Files.readString(dir.resolve("ipmi_sim.log")));
                }
                Thread.sleep(200);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for ipmi_sim", e);
        }
    }

    private boolean answers() throws IOException, InterruptedException {
        if (!process.isAlive()) {
            throw new IllegalStateException("ipmi_sim exited: " + Files.readString(dir.resolve("ipmi_sim.log")));
        }
        List<String> command = new ArrayList<>(prefix);
        command.addAll(List.of("/usr/bin/ipmitool", "-I", "lanplus", "-C", "3", "-H", "127.0.0.1", "-p",
                String.valueOf(port), "-U", USER, "-P", password, "-N", "1", "-R", "1", "chassis", "power",
                "status"));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
