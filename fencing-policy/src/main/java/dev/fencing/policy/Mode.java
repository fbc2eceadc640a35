package dev.fencing.policy;

/** {@code spec.fencing.mode}: whether agents arm the watchdog. */
public enum Mode {
    /** Agents arm the watchdog when the arming rules allow and stop feeding it when quorum is lost (with Fence). */
    WATCHDOG("Watchdog"),
    /** Agents never arm; they observe and report only. */
    NOTIFY("Notify");

    private final String crdValue;

    Mode(String crdValue) {
        this.crdValue = crdValue;
    }

    /** The spelling used in the NodeGroup CRD, e.g. {@code "Watchdog"}. */
    public String crdValue() {
        return crdValue;
    }

    /**
     * Parses the CRD spelling.
     *
     * @throws IllegalArgumentException naming the allowed values when {@code crdValue} is not one of them
     */
    public static Mode parse(String crdValue) {
        return CrdSpelling.parse(Mode.class, "fencing mode", crdValue, Mode::crdValue);
    }
}
