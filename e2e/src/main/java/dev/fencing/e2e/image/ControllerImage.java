package dev.fencing.e2e.image;

import dev.fencing.e2e.controlplane.ControllerLauncher;
import dev.fencing.e2e.process.LoggedProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts the node-manager controller from its container image ({@code target/images/node-manager-controller.oci.tar})
 * with crun, as the chart's Deployment does: the image's entrypoint and user (65532) with only arguments, no
 * capabilities, a read-only root and a memory-backed {@code /tmp}, in the control plane's network namespace. Every
 * argument naming a host file (kubeconfig, TLS certificate, key and CA) is projected the way a Secret volume would
 * be: copied, owned by the image's user and readable only by it, into a directory mounted read-only at
 * {@value #SECRETS}, and the argument rewritten to that path. {@link #close()} deletes every container it started.
 */
public final class ControllerImage implements ControllerLauncher, AutoCloseable {

    /** Where the projected files appear inside the container. */
    public static final String SECRETS = "/var/run/secrets/fencing-lab";

    private final UnpackedImage image;
    private final Path workDir;
    private final String idPrefix;
    private final List<String> env;
    private final List<CrunContainer> containers = new ArrayList<>();

    /**
     * @param workDir  where bundles and projected files go
     * @param idPrefix prefix of the container ids (unique per lab run)
     * @param env      environment the pod adds (POD_NAME, POD_NAMESPACE)
     */
    public ControllerImage(UnpackedImage image, Path workDir, String idPrefix, List<String> env) {
        this.image = image;
        this.workDir = workDir;
        this.idPrefix = idPrefix;
        this.env = List.copyOf(env);
    }

    @Override
    public synchronized LoggedProcess start(String processName, String namespace, List<String> args, Path logDir) {
        String id = idPrefix + "-" + processName;
        Path bundle = workDir.resolve(processName);
        Path secrets = bundle.resolve("secrets");
        List<String> projected = new ArrayList<>();
        try {
            Files.createDirectories(secrets);
            int index = 0;
            for (String arg : args) {
                Path file = Path.of(arg);
                if (arg.startsWith("/") && Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                    String name = (index++) + "-" + file.getFileName();
                    Path copy = secrets.resolve(name);
                    Files.copy(file, copy, StandardCopyOption.REPLACE_EXISTING);
                    ownByImageUser(copy, "r--------");
                    projected.add(SECRETS + "/" + name);
                } else {
                    projected.add(arg);
                }
            }
            ownByImageUser(secrets, "r-x------");
        } catch (IOException e) {
            throw new IllegalStateException("cannot project the controller's files into " + secrets + ": "
                    + e.getMessage(), e);
        }
        CrunContainer container = CrunContainer.create(id, bundle.resolve("bundle"), image, new CrunContainer.Spec(
                projected, env, Path.of("/run/netns", namespace),
                List.of(new CrunContainer.Bind(secrets, Path.of(SECRETS), true)), List.of()));
        containers.add(container);
        return container.start(processName, logDir);
    }

    private void ownByImageUser(Path path, String permissions) throws IOException {
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(permissions));
        // numeric ids: the image's user need not exist on the host
        Files.setAttribute(path, "unix:uid", image.uid());
        Files.setAttribute(path, "unix:gid", image.gid());
    }

    /** Deletes every container this launcher started (kills what still runs). */
    @Override
    public synchronized void close() {
        containers.forEach(CrunContainer::close);
    }
}
