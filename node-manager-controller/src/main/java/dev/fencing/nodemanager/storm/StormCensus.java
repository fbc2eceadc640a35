package dev.fencing.nodemanager.storm;

import java.util.Map;

/** Every group with fencing on, as the cluster shows it now (see {@link GroupCensus}). */
@FunctionalInterface
public interface StormCensus {

    /** The groups by name. */
    Map<String, GroupCensus> groups();
}
