package dev.fencing.probes;

import java.util.Optional;

/** One probe: empty when it passes, else the reason for the 503. */
@FunctionalInterface
public interface Probe {

    /** Empty when the probe passes; otherwise a one-line reason. */
    Optional<String> problem();
}
