package dev.fencing.e2e.image;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fencing.e2e.process.CommandResult;
import dev.fencing.e2e.process.HostCommand;
import dev.fencing.e2e.process.LoggedProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One container of an {@link UnpackedImage} run by crun (Debian's OCI runtime) as a kubelet's runtime would run it:
 * the image's entrypoint with the pod's arguments, the image's user, a read-only root, a memory-backed {@code /tmp}
 * (the pods' emptyDir), bind mounts for the host paths the pod mounts, and the network namespace of a lab node
 * joined by path ({@code /run/netns/<name>}). No cgroup namespace and no resource limits: crun only needs a cgroup
 * to put the process in ({@link CrunHost#prepare()}).
 *
 * <p>crun itself runs in the host's namespaces (not under {@code ip netns exec}, which remounts {@code /sys} and so
 * hides the cgroup hierarchies). {@link #close()} deletes the container by force, killing what still runs in it.
 */
public final class CrunContainer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CrunContainer.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration CRUN_TIMEOUT = Duration.ofSeconds(30);
    /** The capabilities a container runtime grants a root container by default (containerd's and Docker's set). */
    public static final List<String> DEFAULT_CAPABILITIES = List.of("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID",
            "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
            "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE");

    /**
     * A host path mounted into the container.
     *
     * @param source      the host path
     * @param destination the path inside the container
     * @param readOnly    mounted read-only
     */
    public record Bind(Path source, Path destination, boolean readOnly) {

        /** @return {@code path} mounted at the same path inside the container */
        public static Bind samePath(Path path, boolean readOnly) {
            return new Bind(path, path, readOnly);
        }
    }

    /**
     * What the pod adds to the image.
     *
     * @param args         the container's arguments (after the image's entrypoint)
     * @param env          environment added to the image's
     * @param netns        the network namespace to join, e.g. {@code /run/netns/fe2e-…-0}
     * @param binds        host paths mounted into the container
     * @param capabilities the process's capabilities (empty: all dropped, as the controller's securityContext does)
     */
    public record Spec(List<String> args, List<String> env, Path netns, List<Bind> binds, List<String> capabilities) {

        /** Copies. */
        public Spec {
            args = List.copyOf(args);
            env = List.copyOf(env);
            binds = List.copyOf(binds);
            capabilities = List.copyOf(capabilities);
        }
    }

    private final String id;
    private final Path bundle;

    private CrunContainer(String id, Path bundle) {
        this.id = id;
        this.bundle = bundle;
    }

    /**
     * Writes the runtime config of container {@code id} into {@code bundle} (the root filesystem stays where the
     * image was unpacked; several containers can share it since it is mounted read-only).
     */
    public static CrunContainer create(String id, Path bundle, UnpackedImage image, Spec spec) {
        List<String> args = new ArrayList<>(image.entrypoint());
        args.addAll(spec.args());
        List<String> env = new ArrayList<>(image.env());
        env.addAll(spec.env());
        Map<String, Object> capabilities = Map.of("bounding", spec.capabilities(), "effective", spec.capabilities(),
                "permitted", spec.capabilities());
        Map<String, Object> process = new LinkedHashMap<>();
        process.put("terminal", false);
        process.put("user", Map.of("uid", image.uid(), "gid", image.gid()));
        process.put("args", args);
        process.put("env", env);
        process.put("cwd", "/");
        process.put("capabilities", capabilities);
        process.put("noNewPrivileges", true);

        List<Map<String, Object>> mounts = new ArrayList<>();
        mounts.add(mount("/proc", "proc", "proc", List.of("nosuid", "noexec", "nodev")));
        mounts.add(mount("/dev", "tmpfs", "tmpfs", List.of("nosuid", "strictatime", "mode=755", "size=65536k")));
        mounts.add(mount("/dev/pts", "devpts", "devpts",
                List.of("nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620")));
        mounts.add(mount("/dev/shm", "tmpfs", "shm", List.of("nosuid", "noexec", "nodev", "mode=1777", "size=65536k")));
        mounts.add(mount("/dev/mqueue", "mqueue", "mqueue", List.of("nosuid", "noexec", "nodev")));
        mounts.add(mount("/sys", "sysfs", "sysfs", List.of("nosuid", "noexec", "nodev", "ro")));
        // the pods' memory-backed emptyDir on /tmp
        mounts.add(mount("/tmp", "tmpfs", "tmpfs", List.of("nosuid", "nodev", "mode=1777", "size=65536k")));
        for (Bind bind : spec.binds()) {
            mounts.add(mount(bind.destination().toString(), "bind", bind.source().toString(),
                    List.of("rbind", bind.readOnly() ? "ro" : "rw")));
        }

        Map<String, Object> linux = new LinkedHashMap<>();
        linux.put("namespaces", List.of(Map.of("type", "pid"), Map.of("type", "ipc"), Map.of("type", "uts"),
                Map.of("type", "mount"), Map.of("type", "network", "path", spec.netns().toString())));
        linux.put("maskedPaths", List.of("/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware"));
        linux.put("readonlyPaths", List.of("/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                "/proc/sysrq-trigger"));

        Map<String, Object> config = new LinkedHashMap<>();
        config.put("ociVersion", "1.0.2");
        config.put("process", process);
        config.put("root", Map.of("path", image.rootfs().toAbsolutePath().toString(), "readonly", true));
        config.put("hostname", id.length() > 63 ? id.substring(0, 63) : id);
        config.put("mounts", mounts);
        config.put("linux", linux);
        try {
            Files.createDirectories(bundle);
            JSON.writerWithDefaultPrettyPrinter().writeValue(bundle.resolve("config.json").toFile(), config);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write the runtime config into " + bundle + ": " + e.getMessage(),
                    e);
        }
        return new CrunContainer(id, bundle);
    }

    private static Map<String, Object> mount(String destination, String type, String source, List<String> options) {
        Map<String, Object> mount = new LinkedHashMap<>();
        mount.put("destination", destination);
        mount.put("type", type);
        mount.put("source", source);
        mount.put("options", options);
        return mount;
    }

    /** @return the container's id */
    public String id() {
        return id;
    }

    /** @return {@code crun run --bundle <bundle> <id>}: runs in the foreground, output to the caller's stdout */
    public List<String> runCommand() {
        return List.of("crun", "run", "--bundle", bundle.toString(), id);
    }

    /** Starts {@code crun run} with its output (the container's) in {@code logDir/<processName>.log}. */
    public LoggedProcess start(String processName, Path logDir) {
        return LoggedProcess.start(processName, runCommand(), logDir);
    }

    /** @return {@code crun kill <id> KILL}, what a watchdog reset does to this container */
    public String killCommand() {
        return "crun kill " + id + " KILL";
    }

    /** @return the container's state as crun reports it ({@code running}, {@code stopped}), or empty if none */
    public String state() {
        return stateField("status");
    }

    /**
     * @return the host pid of the container's first process
     * @throws IllegalStateException when crun does not know the container
     */
    public long pid() {
        String pid = stateField("pid");
        if (pid.isEmpty()) {
            throw new IllegalStateException("crun knows no container " + id);
        }
        return Long.parseLong(pid);
    }

    private String stateField(String field) {
        CommandResult result = HostCommand.run(List.of("crun", "state", id), CRUN_TIMEOUT);
        if (!result.ok()) {
            return "";
        }
        try {
            return JSON.readTree(result.stdout()).path(field).asText();
        } catch (IOException e) {
            return "";
        }
    }

    /** Deletes the container by force (kills what still runs in it); nothing when crun no longer knows it. */
    @Override
    public void close() {
        CommandResult result = HostCommand.run(List.of("crun", "delete", "--force", id), CRUN_TIMEOUT);
        if (!result.ok() && !result.stderr().contains("does not exist")) {
            LOG.warn("event=container-delete-failed container={} stderr=\"{}\"", id, result.stderr().strip());
        }
    }
}
