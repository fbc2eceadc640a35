package dev.fencing.e2e.netns;

/** An injected fault that can be lifted again; lifting twice is harmless. */
public interface Fault extends AutoCloseable {

    /** @return what this fault does, for logs and reports */
    String description();

    /** Lifts the fault. */
    void heal();

    /** Same as {@link #heal()}. */
    @Override
    default void close() {
        heal();
    }
}
