package dev.fencing.e2e.controlplane;

import dev.fencing.e2e.process.LoggedProcess;
import java.nio.file.Path;
import java.util.List;

/** How a {@link ControlPlane} starts the node-manager controller: the packaged jar, or its container image. */
@FunctionalInterface
public interface ControllerLauncher {

    /**
     * Starts the controller with {@code args} (its command-line arguments only) inside the control plane's network
     * namespace.
     *
     * @param processName unique name for the log ({@code logDir/<processName>.log}, stdout and stderr)
     * @param namespace   the control plane's network namespace (a name under {@code /run/netns})
     */
    LoggedProcess start(String processName, String namespace, List<String> args, Path logDir);
}
