package dev.fencing.nodemanager.escalation;

import dev.fencing.api.fencing.v1alpha1.SecretKeyRef;
import java.util.Optional;

/** Reads one Secret key for a fence agent parameter. */
@FunctionalInterface
public interface SecretSource {

    /** The key's value, or empty when the Secret or the key does not exist. */
    Optional<String> read(SecretKeyRef ref);
}
