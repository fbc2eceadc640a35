package dev.fencing.e2e.controlplane;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the lab's controller runs with beyond the lab's fixed flags.
 *
 * @param powerFencing with {@code --power-fencing}: the NodeFencingConfig and NodeFencing CRDs are installed, the
 *                     chart's identity is rendered with {@code controller.powerFencing.enabled=true} (its NodeFencing
 *                     rules), and the controller runs the real fence agents from {@value #FENCE_AGENTS_DIR}
 * @param extraArgs    more controller flags, appended last (e.g. {@code --power-fencing-interval 500ms})
 */
public record ControllerOptions(boolean powerFencing, List<String> extraArgs) {

    /** Debian's fence-agents install {@code fence_*} here; the controller runs in the host's file system. */
    public static final String FENCE_AGENTS_DIR = "/usr/sbin";

    public ControllerOptions {
        extraArgs = List.copyOf(extraArgs);
    }

    /** @return the lab's controller as it always ran: no power fencing, no extra flags */
    public static ControllerOptions defaults() {
        return new ControllerOptions(false, List.of());
    }

    /** @return power fencing on, with {@code extraArgs} */
    public static ControllerOptions withPowerFencing(String... extraArgs) {
        return new ControllerOptions(true, List.of(extraArgs));
    }

    /** @return the controller flags these options add */
    List<String> args() {
        if (!powerFencing) {
            return extraArgs;
        }
        // no kdump listener: the lab sends no fence_kdump messages
        List<String> args = new ArrayList<>(List.of("--power-fencing", "--fence-agents-dir",
                FENCE_AGENTS_DIR, "--kdump-port", "-1"));
        args.addAll(extraArgs);
        return args;
    }

    /** @return the chart values the lab's RBAC is rendered with */
    Map<String, Object> chartValues() {
        return powerFencing ? Map.of("controller.powerFencing.enabled", "true") : Map.of();
    }
}
