package dev.fencing.nodemanager.keyring;

import java.util.Optional;

/**
 * The three live phases of a gossip key rotation (ARCHITECTURE §9). Each phase is one keyring revision; the next
 * phase starts only when every reachable agent has installed the previous one.
 */
public enum KeyRotationPhase {
    /** The new key is accepted for decryption next to the old primary; nobody encrypts with it yet. */
    INSTALL_SECONDARY(1, "InstallSecondary", "Phase1InstallSecondary", "install the new key as a secondary"),
    /** Everyone encrypts with the new key; the old one is still accepted from agents that have not switched. */
    USE_NEW_PRIMARY(2, "UseNewPrimary", "Phase2UseNewPrimary", "use the new key as the primary"),
    /** The old key is removed; only agents holding the new key can talk. */
    REMOVE_OLD(3, "RemoveOld", "Phase3RemoveOld", "remove the old key");

    private final int number;
    private final String stored;
    private final String reason;
    private final String description;

    KeyRotationPhase(int number, String stored, String reason, String description) {
        this.number = number;
        this.stored = stored;
        this.reason = reason;
        this.description = description;
    }

    /** 1, 2 or 3. */
    public int number() {
        return number;
    }

    /** The value kept in the keyring Secret's phase annotation. */
    public String stored() {
        return stored;
    }

    /** The reason of the {@code GossipKeyRotation} condition while this phase runs. */
    public String reason() {
        return reason;
    }

    /** What this phase does, for humans. */
    public String description() {
        return description;
    }

    /** The phase after this one, empty after {@link #REMOVE_OLD}. */
    public Optional<KeyRotationPhase> next() {
        return switch (this) {
            case INSTALL_SECONDARY -> Optional.of(USE_NEW_PRIMARY);
            case USE_NEW_PRIMARY -> Optional.of(REMOVE_OLD);
            case REMOVE_OLD -> Optional.empty();
        };
    }

    /** Parses a stored phase; empty for null, blank or unknown values. */
    public static Optional<KeyRotationPhase> fromStored(String value) {
        for (KeyRotationPhase p : values()) {
            if (p.stored.equals(value)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }
}
