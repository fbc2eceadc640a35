package dev.fencing.policy;

/**
 * {@code spec.fencing.afterFence}: what the controller does with a node once it counts as fenced and the storm
 * limits admit it.
 */
public enum AfterFence {
    /** {@link #DELETE_NODE} for nodeType CloudEphemeral (the platform recreates the machine), else {@link #TAINT}. */
    AUTO("Auto"),
    /** The out-of-service taint; removed once the node is back (Ready and its agent reports again). */
    TAINT("Taint"),
    /** Delete the Node object so the platform replaces the machine. */
    DELETE_NODE("DeleteNode");

    private final String crdValue;

    AfterFence(String crdValue) {
        this.crdValue = crdValue;
    }

    /** The spelling used in the NodeGroup CRD, e.g. {@code "DeleteNode"}. */
    public String crdValue() {
        return crdValue;
    }

    /** What this setting does for a group whose machines the platform does ({@code true}) or does not recreate. */
    public AfterFence effective(boolean recreatedByPlatform) {
        if (this != AUTO) {
            return this;
        }
        return recreatedByPlatform ? DELETE_NODE : TAINT;
    }

    /**
     * Parses the CRD spelling.
     *
     * @throws IllegalArgumentException naming the allowed values
     */
    public static AfterFence parse(String crdValue) {
        return CrdSpelling.parse(AfterFence.class, "afterFence", crdValue, AfterFence::crdValue);
    }
}
