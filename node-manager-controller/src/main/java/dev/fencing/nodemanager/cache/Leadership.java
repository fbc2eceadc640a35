package dev.fencing.nodemanager.cache;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Whether this replica currently leads (writes status, labels, events; grants tie-breaks). */
public final class Leadership {

    private static final Logger LOG = LoggerFactory.getLogger(Leadership.class);

    /** Leadership transitions. */
    public interface Listener {
        void startedLeading();

        void stoppedLeading();
    }

    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    private volatile boolean leader;

    /** Adds a listener. */
    public void addListener(Listener l) {
        listeners.add(l);
    }

    /** True while leading. */
    public boolean isLeader() {
        return leader;
    }

    /** Called by leader election (or at start when it is off). */
    public void startLeading() {
        leader = true;
        LOG.info("event=leadership_acquired");
        listeners.forEach(Listener::startedLeading);
    }

    /** Called by leader election when the lease is lost. */
    public void stopLeading() {
        leader = false;
        LOG.info("event=leadership_lost");
        listeners.forEach(Listener::stoppedLeading);
    }
}
