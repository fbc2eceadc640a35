package dev.fencing.e2e.image;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.CommandResult;
import dev.fencing.e2e.process.HostCommand;
import dev.fencing.kubetest.IpmiSimulator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The fence-agents variant of the controller image ({@code target/images/node-manager-controller-fence-agents.oci.tar},
 * built by {@code scripts/images}): the controller image plus python3, ipmitool and the IPMI agents of Debian's
 * fence-agents. Each fence agent runs in a crun container of the unpacked image (its root filesystem, read-only, as
 * the image's user 65532 without capabilities, the controller's securityContext), so the interpreter, ipmitool and
 * every library are the image's: the host's are not visible. The agents get their parameters as {@code name=value}
 * lines on stdin, as the controller passes them, and power an {@code ipmi_sim} on 127.0.0.1 (the container joins the
 * test's network namespace) off and on.
 */
class FenceAgentsImageIT {

    private static final String IMAGE = "node-manager-controller-fence-agents";
    private static final String PASSWORD = "image-bmc-pw";
    private static final Duration RUN = Duration.ofSeconds(60);
    /** fence-agents' exit codes: 0 success (status: on), 1 failure, 2 status: off. */
    private static final int EC_OK = 0;
    private static final int EC_GENERIC_ERROR = 1;
    private static final int EC_STATUS_OFF = 2;

    private final List<CrunContainer> containers = new ArrayList<>();
    private IpmiSimulator bmc;
    private Path scratch;
    private UnpackedImage unpacked;
    private int runs;

    @AfterEach
    void tearDown() {
        containers.forEach(CrunContainer::close);
        if (bmc != null) {
            bmc.close();
        }
        if (scratch != null) {
            HostCommand.check(List.of("rm", "-rf", scratch.toString()), Duration.ofMinutes(1));
        }
    }

    @Test
    void fenceIpmilanFromTheImagePowersAnIpmiSimOffAndOnWithTheImagesPythonAndIpmitool() throws IOException {
        ProjectLayout layout = ProjectLayout.fromWorkingDirectory();
        String crun = CrunHost.prepare();
        OciImage image = OciImage.locate(layout, IMAGE);
        scratch = Files.createTempDirectory("fencing-fence-agents-image-");
        long started = System.nanoTime();
        unpacked = image.unpack(scratch.resolve("image"));
        // the controller image's entrypoint and user: only the layer with the agents is added
        assertThat(unpacked.entrypoint()).containsExactly("/opt/java/bin/java", "-cp",
                "/app/node-manager-controller.jar", "dev.fencing.nodemanager.NodeManagerOperator");
        assertThat(unpacked.uid()).isEqualTo(65532);
        Path rootfs = unpacked.rootfs();
        for (String agent : List.of("fence_ipmilan", "fence_ipmilanplus", "fence_idrac", "fence_ilo3", "fence_ilo4",
                "fence_ilo5", "fence_imm")) {
            assertThat(rootfs.resolve("usr/sbin").resolve(agent)).as(agent).isExecutable();
        }
        // only the IPMI agents, not the cloud agents and their Python libraries
        assertThat(rootfs.resolve("usr/sbin/fence_aws")).doesNotExist();
        assertThat(rootfs.resolve("usr/lib/python3/dist-packages/boto3")).doesNotExist();

        CommandResult metadata = agent("fence_ipmilan", null, "-o", "metadata");
        assertThat(metadata.exitCode()).as(metadata.stderr()).isEqualTo(EC_OK);
        assertThat(metadata.stdout()).contains("<resource-agent name=\"fence_ipmilan\"", "name=\"lanplus\"");
        CommandResult help = agent("fence_ipmilanplus", null, "--help");
        assertThat(help.exitCode()).as(help.stderr()).isEqualTo(EC_OK);
        assertThat(help.stdout()).contains("--lanplus", "--ipport");

        bmc = IpmiSimulator.start(scratch.resolve("bmc"), PASSWORD, "echo hook-power-off >> "
                + scratch.resolve("bmc").resolve("hook-calls"));

        CommandResult status = agent("fence_ipmilan", ipmi(PASSWORD, "status"));
        assertThat(status.exitCode()).as(status.stderr()).isEqualTo(EC_OK);
        assertThat(status.stdout()).contains("Status: ON");

        CommandResult off = agent("fence_ipmilan", ipmi(PASSWORD, "off"));
        assertThat(off.exitCode()).as(off.stderr()).isEqualTo(EC_OK);
        assertThat(bmc.power()).isEqualTo("0");
        assertThat(bmc.events()).containsExactly("power 0");
        assertThat(Files.readAllLines(scratch.resolve("bmc").resolve("hook-calls"))).containsExactly("hook-power-off");
        CommandResult statusOff = agent("fence_ipmilan", ipmi(PASSWORD, "status"));
        assertThat(statusOff.exitCode()).as(statusOff.stderr()).isEqualTo(EC_STATUS_OFF);
        assertThat(statusOff.stdout()).contains("Status: OFF");

        CommandResult on = agent("fence_ipmilan", ipmi(PASSWORD, "on"));
        assertThat(on.exitCode()).as(on.stderr()).isEqualTo(EC_OK);
        assertThat(bmc.power()).isEqualTo("1");

        CommandResult refused = agent("fence_ipmilan", ipmi("not-" + PASSWORD, "off"));
        assertThat(refused.exitCode()).as(refused.stdout() + refused.stderr()).isEqualTo(EC_GENERIC_ERROR);
        assertThat(bmc.power()).isEqualTo("1");
        assertThat(bmc.events()).containsExactly("power 0", "power 1");
        System.out.printf("fence-agents image: %s, unpacked and %d agent runs in %d ms (%s)%n", image.archive(), runs,
                (System.nanoTime() - started) / 1_000_000, crun);
    }

    /** The parameters of fence_ipmilan for the simulator: lanplus with cipher suite 3 (what ipmi_sim offers). */
    private String ipmi(String password, String action) {
        return String.join("\n", "ip=127.0.0.1", "ipport=" + bmc.port(), "username=" + IpmiSimulator.USER,
                "password=" + password, "lanplus=1", "cipher=3", "action=" + action) + "\n";
    }

    /**
     * Runs {@code /usr/sbin/<agent> <args>} in a container of the image (its own root, user and empty capability
     * set, the network namespace of this test) with {@code stdin}, and waits for it.
     */
    private CommandResult agent(String agent, String stdin, String... args) {
        List<String> command = new ArrayList<>(List.of("/usr/sbin/" + agent));
        command.addAll(List.of(args));
        UnpackedImage asAgent = new UnpackedImage(unpacked.rootfs(), command, unpacked.env(), unpacked.uid(),
                unpacked.gid());
        String id = "fe2e-fence-agents-" + ProcessHandle.current().pid() + "-" + (++runs);
        CrunContainer container = CrunContainer.create(id, scratch.resolve("bundle-" + runs), asAgent,
                new CrunContainer.Spec(List.of(), List.of(), Path.of("/proc", String.valueOf(
                        ProcessHandle.current().pid()), "ns", "net"), List.of(), List.of()));
        containers.add(container);
        return HostCommand.run(container.runCommand(), stdin, RUN);
    }
}
