package dev.fencing.nodemanager.stream;

import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.proto.nodemanager.v1.ApiServerProbe;
import dev.fencing.proto.nodemanager.v1.ConfigDelta;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import io.grpc.Status;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fans group configuration out to connected agents: one {@link GroupConfigLog} per group, and per agent the
 * revision it was last sent, so every delta it gets continues exactly what it holds. All work for one group happens
 * under that group's lock and only enqueues into non-blocking sinks, so a slow agent never delays the others.
 */
public final class ConfigDistributor {

    private static final Logger LOG = LoggerFactory.getLogger(ConfigDistributor.class);

    private final String epoch;
    private final int historyLimit;
    private final boolean requireKeyring;
    private final ApiServerProbe apiServerProbe;
    private final InstantSource clock;
    private final AtomicLong revisions = new AtomicLong();
    private final Map<String, GroupChannel> groups = new ConcurrentHashMap<>();
    private final Map<String, String> lastServedGroup = new ConcurrentHashMap<>();

    /**
     * @param epoch        this process's configuration history identity (random per process)
     * @param historyLimit changes kept per group for agents resuming by revision
     */
    public ConfigDistributor(String epoch, int historyLimit) {
        this(epoch, historyLimit, false);
    }

    /**
     * @param requireKeyring serve a group's agents only once its gossip keyring is known
     */
    public ConfigDistributor(String epoch, int historyLimit, boolean requireKeyring) {
        this(epoch, historyLimit, requireKeyring, null);
    }

    /**
     * @param requireKeyring serve a group's agents only once its gossip keyring is known
     * @param apiServerProbe where agents probe the API server for the APIReachable tie-breaker, put in every full
     *                       config; null: not sent (APIReachable then never answers). It is fixed for the life of
     *                       the process, i.e. of the epoch, so agents resuming with deltas already hold it.
     */
    public ConfigDistributor(String epoch, int historyLimit, boolean requireKeyring, ApiServerProbe apiServerProbe) {
        this(epoch, historyLimit, requireKeyring, apiServerProbe, InstantSource.system());
    }

    /**
     * @param clock the controller's clock, on which the times of {@link #memberSets(String)} are taken (the one its
     *              agent reports are received on)
     */
    public ConfigDistributor(String epoch, int historyLimit, boolean requireKeyring, ApiServerProbe apiServerProbe,
                             InstantSource clock) {
        this.epoch = epoch;
        this.historyLimit = historyLimit;
        this.requireKeyring = requireKeyring;
        this.apiServerProbe = apiServerProbe;
        this.clock = java.util.Objects.requireNonNull(clock, "clock");
    }

    /** This process's epoch. */
    public String epoch() {
        return epoch;
    }

    /** The latest revision handed out in this epoch. */
    public long currentRevision() {
        return revisions.get();
    }

    /**
     * Applies a freshly computed model: diffs it into the group's log and sends each change to the agents it
     * concerns. A model with fencing switched off drops the group and ends its agents' streams.
     *
     * @return the changes made (empty when nothing differed)
     */
    public List<ConfigChange> publish(GroupModel model) {
        return publish(model, null);
    }

    /**
     * Like {@link #publish(GroupModel)}, also bringing the group's gossip keyring to {@code keyring} (null: keep).
     */
    public List<ConfigChange> publish(GroupModel model, dev.fencing.proto.nodemanager.v1.GossipKeyring keyring) {
        return publish(model, keyring, Optional::empty);
    }

    /**
     * Like {@link #publish(GroupModel, dev.fencing.proto.nodemanager.v1.GossipKeyring)}; while the model is invalid
     * and this replica knows no valid policy of the group (it started while the spec was invalid), asks
     * {@code lastValid} for the policy and members an earlier controller served, and serves those.
     */
    public List<ConfigChange> publish(GroupModel model, dev.fencing.proto.nodemanager.v1.GossipKeyring keyring,
                                      Supplier<Optional<GroupConfig>> lastValid) {
        if (!model.fencingEnabled()) {
            remove(model.group(), "fencing is switched off for NodeGroup " + model.group());
            return List.of();
        }
        GroupChannel channel = groups.computeIfAbsent(model.group(), g -> new GroupChannel(
                new GroupConfigLog(g, revisions::incrementAndGet, historyLimit, requireKeyring)));
        synchronized (channel) {
            GroupConfig kept = null;
            if (!model.valid() && !channel.log.hasPolicy()) {
                kept = lastValid.get().orElse(null);
                if (kept != null) {
                    LOG.warn("event=last_valid_config_served group={} members={} quorum_size={} detail=\"spec.fencing"
                            + " is invalid and this replica had no valid policy of the group: its agents are served"
                            + " the policy and members the controller served last, until the spec is fixed\"",
                            model.group(), kept.getMembersCount(), kept.getPolicy().getQuorumSize());
                }
            }
            List<ConfigChange> changes = channel.log.update(model, keyring, kept);
            if (!changes.isEmpty() && channel.log.hasPolicy()) {
                channel.memberSets.record(channel.log.memberNames(), clock.instant());
            }
            if (!changes.isEmpty()) {
                Iterator<Subscription> it = channel.subscribers.iterator();
                while (it.hasNext()) {
                    Subscription s = it.next();
                    if (!s.deliver(changes)) {
                        it.remove();
                    }
                }
            }
            return changes;
        }
    }

    /** Drops a group (deleted or fencing off) and ends the streams of its agents. */
    public void remove(String group, String reason) {
        GroupChannel channel = groups.remove(group);
        if (channel == null) {
            return;
        }
        synchronized (channel) {
            for (Subscription s : channel.subscribers) {
                s.sink.close(Status.UNAVAILABLE.withDescription(reason));
            }
            channel.subscribers.clear();
        }
        lastServedGroup.values().removeIf(group::equals);
        LOG.info("event=group_dropped group={} reason=\"{}\"", group, reason);
    }

    /**
     * The group an agent on {@code node} should be served from when the cache does not place the node in a
     * fencing-enabled group: the one it was last served, if that group still knows it (it then learns it is being
     * removed).
     */
    public Optional<String> lastGroupOf(String node) {
        String group = lastServedGroup.get(node);
        if (group == null) {
            return Optional.empty();
        }
        GroupChannel channel = groups.get(group);
        if (channel == null) {
            return Optional.empty();
        }
        synchronized (channel) {
            return channel.log.knows(node) ? Optional.of(group) : Optional.empty();
        }
    }

    /**
     * Subscribes an agent: sends the deltas it missed when its (epoch, revision) continues this group's history,
     * else a full config, then every later change that concerns it.
     *
     * @return the subscription, or empty with nothing sent when the group has no valid config yet
     */
    public Optional<Subscription> subscribe(String group, ConfigSink sink, String agentEpoch, long agentRevision) {
        GroupChannel channel = groups.get(group);
        if (channel == null) {
            return Optional.empty();
        }
        synchronized (channel) {
            if (!channel.log.ready()) {
                return Optional.empty();
            }
            Subscription s = new Subscription(channel, sink);
            boolean resumable = epoch.equals(agentEpoch) && agentRevision > 0 && agentRevision <= revisions.get()
                    && group.equals(lastServedGroup.get(sink.node()));
            Optional<List<ConfigChange>> missed = resumable
                    ? channel.log.since(agentRevision, sink.node()) : Optional.empty();
            boolean ok;
            if (missed.isPresent()) {
                s.lastSent = agentRevision;
                List<ConfigChange> changes = missed.get();
                if (changes.isEmpty()) {
                    // Nothing missed: acknowledge with an empty delta so the agent knows it is in sync.
                    changes = List.of(new ConfigChange(revisions.incrementAndGet(), ConfigDelta.getDefaultInstance(),
                            sink.node()));
                }
                ok = s.deliver(changes);
                LOG.debug("event=agent_resumed group={} node={} from_revision={} deltas={}", group, sink.node(),
                        agentRevision, changes.size());
            } else {
                GroupConfig full = channel.log.full(sink.node()).orElseThrow();
                if (apiServerProbe != null) {
                    full = full.toBuilder().setApiServerProbe(apiServerProbe).build();
                }
                long revision = Math.max(channel.log.revision(), 1);
                s.lastSent = revision;
                ok = sink.send(ControllerMessage.newBuilder()
                        .setEpoch(epoch).setRevision(revision).setFull(full).build());
            }
            if (!ok) {
                return Optional.empty();
            }
            channel.subscribers.add(s);
            lastServedGroup.put(sink.node(), group);
            return Optional.of(s);
        }
    }

    /**
     * The policy {@code group}'s agents are served and the members that go with it (see
     * {@link GroupConfigLog#lastValid()}), or empty when this replica knows no valid policy of it.
     */
    public Optional<ServedConfig> lastValid(String group) {
        return inLog(group, GroupConfigLog::lastValid, Optional.empty());
    }

    /**
     * The member sets this replica has served {@code group}'s agents since it started (a snapshot; empty when it
     * serves no such group): what a silent node of the group may still count its quorum over.
     */
    public ServedMemberSets memberSets(String group) {
        GroupChannel channel = groups.get(group);
        return channel == null ? new ServedMemberSets() : channel.memberSets.copy();
    }

    /** Whether this replica holds a valid policy of {@code group} (from the spec, or kept from before). */
    public boolean hasPolicy(String group) {
        return inLog(group, GroupConfigLog::hasPolicy, false);
    }

    /** Whether {@code group} has a valid config agents can be served. */
    public boolean ready(String group) {
        return inLog(group, GroupConfigLog::ready, false);
    }

    // Reads group's log under its lock; absent when this replica serves no such group.
    private <T> T inLog(String group, java.util.function.Function<GroupConfigLog, T> read, T absent) {
        GroupChannel channel = groups.get(group);
        if (channel == null) {
            return absent;
        }
        synchronized (channel) {
            return read.apply(channel.log);
        }
    }

    /** Connected agents per group. */
    public Map<String, Integer> subscriberCounts() {
        Map<String, Integer> out = new java.util.TreeMap<>();
        groups.forEach((g, c) -> {
            synchronized (c) {
                out.put(g, c.subscribers.size());
            }
        });
        return out;
    }

    /**
     * Every reporting subscription's revision lag: the revision it was last sent minus the revision its latest report
     * says it applied (queued, in flight or not yet applied).
     */
    public List<Long> revisionLags() {
        List<Long> out = new ArrayList<>();
        groups.forEach((g, c) -> {
            synchronized (c) {
                for (Subscription s : c.subscribers) {
                    if (s.applied > 0) {
                        out.add(Math.max(0, s.lastSent - s.applied));
                    }
                }
            }
        });
        return out;
    }

    private static final class GroupChannel {
        final GroupConfigLog log;
        final Set<Subscription> subscribers = new LinkedHashSet<>();
        final ServedMemberSets memberSets = new ServedMemberSets();

        GroupChannel(GroupConfigLog log) {
            this.log = log;
        }
    }

    /** One agent's place in a group's fan-out. */
    public final class Subscription {
        private final GroupChannel channel;
        private final ConfigSink sink;
        private long lastSent;
        private long applied;

        private Subscription(GroupChannel channel, ConfigSink sink) {
            this.channel = channel;
            this.sink = sink;
        }

        /** The group this agent is served from. */
        public String group() {
            return channel.log.group();
        }

        /** The revision the agent holds once it has processed what was queued. */
        public long lastSentRevision() {
            synchronized (channel) {
                return lastSent;
            }
        }

        /** The agent reported the (epoch, revision) it runs with. */
        public void reportedApplied(String agentEpoch, long revision) {
            if (epoch.equals(agentEpoch)) {
                synchronized (channel) {
                    applied = revision;
                }
            }
        }

        /** Stops sending to this agent (its stream ended). */
        public void cancel() {
            synchronized (channel) {
                channel.subscribers.remove(this);
            }
        }

        /** Called under the channel lock. */
        private boolean deliver(List<ConfigChange> changes) {
            List<ConfigChange> mine = changes.stream().filter(c -> channel.log.concerns(c, sink.node())).toList();
            for (int i = 0; i < mine.size(); i++) {
                ConfigChange c = mine.get(i);
                // More of the same change follow for this agent: it applies them together, after the last.
                boolean more = i + 1 < mine.size() && mine.get(i + 1).batch() == c.batch();
                ControllerMessage message = ControllerMessage.newBuilder()
                        .setEpoch(epoch)
                        .setRevision(c.revision())
                        .setDelta(c.delta().toBuilder().setBaseRevision(lastSent).setMore(more))
                        .build();
                if (!sink.send(message)) {
                    return false;
                }
                lastSent = c.revision();
            }
            return true;
        }
    }
}
