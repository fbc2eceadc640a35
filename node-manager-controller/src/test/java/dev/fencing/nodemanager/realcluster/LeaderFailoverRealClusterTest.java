package dev.fencing.nodemanager.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.FencingTimings;
import dev.fencing.api.v1.FencingWatchdog;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupStatus;
import dev.fencing.kubetest.RealControlPlane;
import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.grpc.TestAgent;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.tiebreak.TieBreakArbiter;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.TieBreakGrant;
import dev.fencing.proto.nodemanager.v1.TieBreakRequest;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import dev.fencing.nodemanager.dependent.AgentDaemonSetFactory;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Informable;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two controller processes on one real {@code coordination.k8s.io} Lease, each with the chart's privileges: the
 * leader alone writes; killed with SIGKILL, the other takes the Lease over once it has expired, grants no tie-break
 * while a grant of the dead leader may still be believed, and writes nothing the dead leader already wrote.
 */
class LeaderFailoverRealClusterTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.withControllers();

    private static final Duration LEASE_DURATION = Duration.ofSeconds(4);
    /** Longer than a takeover takes (lease duration + a jittered retry), so the new leader's wait matters. */
    private static final Duration MAX_TIE_LEASE = Duration.ofSeconds(6);
    private static final List<String> WRITES = List.of("event=node_labels_patched", "event=k8s_event ",
            "event=daemonset_created", "event=daemonset_updated", "event=gossip_keyring_created", "event=out_of_service");

    private final List<AutoCloseable> closing = new ArrayList<>();
    private final ScheduledExecutorService reporter = Executors.newSingleThreadScheduledExecutor();

    /** One answer to a tie-break request as the agent saw it. */
    private record Answer(long sentNanos, long receivedNanos, TieBreakGrant grant) {
    }

    @AfterEach
    void tearDown() throws Exception {
        reporter.shutdownNow();
        RealCluster.closeInReverse(closing);
    }

    @Test
    void killingTheLeaderHandsTheLeaseOverAndTheNewLeaderWaitsOutOldTieGrantsAndWritesNothingTwice()
            throws Exception {
        RealControlPlane plane = KUBE.get();
        RealCluster.LeaderElectedLab lab = RealCluster.LeaderElectedLab.create(plane, "ha");
        KubernetesClient admin = lab.admin();
        String namespace = lab.namespace();
        String group = lab.group();
        String leaseName = lab.leaseName();
        List<String> nodes = RealCluster.registerNodes(admin, group, 4, 2);

        Map<String, AtomicInteger> labelChanges = watchFencingLabelChanges(admin, group);
        AtomicInteger daemonSetRewrites = watchDaemonSetRewrites(admin, namespace, group);
        List<SeenLease> leaseHistory = watchLease(admin, namespace, leaseName);

        List<String> args = lab.args("--max-tie-lease", "6s");
        ControllerProcess a = lab.start("controller-a", args);
        closing.add(a);
        ControllerProcess b = lab.start("controller-b", args);
        closing.add(b);
        // Heartbeats of 2 s ask for a 6 s tie lease (three heartbeats), --max-tie-lease.
        admin.resource(RealCluster.watchdogGroup(group, new Fencing()
                .withWatchdog(new FencingWatchdog().withTimeout("60s"))
                .withTimings(new FencingTimings().withHeartbeatInterval("2s").withQuorumWindow("9s")))).create();
        closing.add(() -> admin.resources(NodeGroup.class).withName(group).delete());

        Lease first = lab.awaitHeldLease();
        ControllerProcess leader = RealCluster.holder(first, a, b);
        ControllerProcess follower = leader == a ? b : a;

        // Every agent talks to the follower, which passes reports and tie-break requests on to the leader.
        Map<String, Pod> pods = RealCluster.agentPods(admin, namespace, group, nodes);
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", follower.grpcPort()).usePlaintext()
                .build();
        closing.add(() -> channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS));
        Map<String, TestAgent> agents = new ConcurrentHashMap<>();
        for (String node : nodes) {
            Pod pod = pods.get(node);
            String token = RealCluster.agentToken(plane, namespace, pod);
            TestAgent agent = RealCluster.connectServed(channel, node, token).agent();
            closing.add(agent);
            agents.put(node, agent);
        }
        reporter.scheduleAtFixedRate(() -> agents.values().forEach(agent -> agent.send(AgentMessage.newBuilder()
                .setReport(AgentReport.newBuilder().setArmed(true).setQuorumHeld(true).setConfirmed(4)
                        .setExpected(4).setQuorumSize(3).setMode(FencingMode.FENCING_MODE_WATCHDOG)).build())),
                0, 1, TimeUnit.SECONDS);

        await().atMost(Duration.ofSeconds(30)).until(() -> {
            NodeGroupStatus status = admin.resources(NodeGroup.class).withName(group).get().getStatus();
            return status != null && Integer.valueOf(4).equals(status.getArmed()) && nodes.stream().allMatch(
                    n -> admin.nodes().withName(n).get().getMetadata().getLabels()
                            .containsKey(NodeLabels.FENCING_ENABLED));
        });
        for (String write : WRITES) {
            assertThat(follower.logLinesWith(write)).as("the follower %s writes nothing", follower).isEmpty();
        }

        // The leader grants the tie to {1,2} (after its own start-up wait), through the follower.
        List<String> sideA = List.of(nodes.get(0), nodes.get(1));
        List<String> sideB = List.of(nodes.get(2), nodes.get(3));
        List<Answer> toA = askUntilGranted(agents.get(nodes.get(0)), sideA, 1_000, Duration.ofSeconds(40));
        Answer granted = toA.get(toA.size() - 1);
        // The agent counts valid_for from its send time; the old leader's own record of the grant ends later.
        long oldGrantBelievedUntil = granted.sentNanos() + TimeUnit.SECONDS.toNanos(granted.grant().getValidFor()
                .getSeconds()) + granted.grant().getValidFor().getNanos();
        assertThat(granted.grant().getValidFor().getSeconds()).isEqualTo(MAX_TIE_LEASE.toSeconds());

        leader.kill();

        // The other half asks the new leader until it grants.
        List<Answer> toB = askUntilGranted(agents.get(nodes.get(2)), sideB, 2_000, Duration.ofSeconds(60));
        assertThat(toB).filteredOn(x -> x.receivedNanos() - oldGrantBelievedUntil < 0)
                .as("nothing is granted to the other half while the old leader's grant may be believed")
                .allMatch(x -> !x.grant().getGranted());
        assertThat(toB).as("the new leader said it waits out a grant it cannot see")
                .anyMatch(x -> x.grant().getReason().startsWith("waiting out a previous grant"));
        assertThat(toB.get(toB.size() - 1).receivedNanos()).isGreaterThanOrEqualTo(oldGrantBelievedUntil);
        // The new leader's own grant now holds: the first half is refused.
        Answer refused = askUntilGranted(agents.get(nodes.get(0)), sideA, 3_000, Duration.ofSeconds(5), 1).get(0);
        assertThat(refused.grant().getGranted()).isFalse();
        assertThat(refused.grant().getReason()).startsWith(TieBreakArbiter.HELD_BY_OTHER_SIDE_PREFIX);

        // The Lease went over once, and only after it had expired.
        Lease now = admin.leases().inNamespace(namespace).withName(leaseName).get();
        assertThat(RealCluster.holder(now, a, b)).isSameAs(follower);
        assertThat(now.getSpec().getLeaseTransitions()).isEqualTo(first.getSpec().getLeaseTransitions() + 1);
        // The elector writes acquireTime from the start of its attempt, so the takeover is dated by when this test
        // saw it (after the write, which came after the decision): never before the old renewal + lease duration.
        ZonedDateTime lastRenewalByOld = leaseHistory.stream()
                .filter(l -> Objects.equals(l.lease().getSpec().getHolderIdentity(),
                        first.getSpec().getHolderIdentity()))
                .map(l -> l.lease().getSpec().getRenewTime()).max(ZonedDateTime::compareTo).orElseThrow();
        java.time.Instant takeoverSeen = leaseHistory.stream()
                .filter(l -> Objects.equals(l.lease().getSpec().getHolderIdentity(), now.getSpec().getHolderIdentity()))
                .map(SeenLease::seenAt).min(java.time.Instant::compareTo).orElseThrow();
        assertThat(takeoverSeen).isAfterOrEqualTo(lastRenewalByOld.plus(LEASE_DURATION).toInstant());

        // Nothing written twice: each node's fencing labels were set once, by the first leader; one Armed Event each.
        assertThat(labelChanges).containsOnlyKeys(nodes);
        assertThat(labelChanges.values()).allMatch(c -> c.get() == 1);
        for (String write : List.of("event=node_labels_patched", "event=daemonset_", "event=gossip_keyring_created")) {
            assertThat(follower.logLinesWith(write)).as("the new leader %s rewrites nothing", follower).isEmpty();
        }
        assertThat(daemonSetRewrites).as("the agent DaemonSet was written once").hasValue(0);
        Map<String, Long> armedEvents = new java.util.TreeMap<>();
        admin.v1().events().inNamespace("default").list().getItems().stream()
                .filter(e -> "Armed".equals(e.getReason()) && nodes.contains(e.getInvolvedObject().getName()))
                .forEach(e -> armedEvents.merge(e.getInvolvedObject().getName(), 1L, Long::sum));
        assertThat(armedEvents).containsOnlyKeys(nodes).allSatisfy((n, count) -> assertThat(count).isEqualTo(1));
    }

    private static List<Answer> askUntilGranted(TestAgent agent, List<String> side, long firstId, Duration atMost)
            throws InterruptedException {
        return askUntilGranted(agent, side, firstId, atMost, Integer.MAX_VALUE);
    }

    // Sends a request every 250 ms and collects the answers until one grants (or maxAnswers came).
    private static List<Answer> askUntilGranted(TestAgent agent, List<String> side, long firstId, Duration atMost,
                                                int maxAnswers) throws InterruptedException {
        Map<Long, Long> sent = new ConcurrentHashMap<>();
        List<Answer> answers = new ArrayList<>();
        agent.received.clear();
        long deadline = System.nanoTime() + atMost.toNanos();
        long nextId = firstId;
        long nextSend = System.nanoTime();
        while (System.nanoTime() - deadline < 0) {
            if (System.nanoTime() - nextSend >= 0) {
                sent.put(nextId, System.nanoTime());
                agent.send(AgentMessage.newBuilder().setTieBreakRequest(TieBreakRequest.newBuilder()
                        .setRequestId(nextId++).addAllSide(side)).build());
                nextSend = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(250);
            }
            ControllerMessage m = agent.received.poll(50, TimeUnit.MILLISECONDS);
            if (m == null || !m.hasTieBreak() || !sent.containsKey(m.getTieBreak().getRequestId())) {
                continue;
            }
            answers.add(new Answer(sent.get(m.getTieBreak().getRequestId()), System.nanoTime(), m.getTieBreak()));
            if (m.getTieBreak().getGranted() || answers.size() >= maxAnswers) {
                return answers;
            }
        }
        throw new AssertionError("no tie-break grant for " + side + " within " + atMost + "; answers: "
                + answers.stream().map(x -> x.grant().getReason()).distinct().toList());
    }

    // Counts, per node, the updates that changed its fencing-enabled or fencing-mode label.
    private Map<String, AtomicInteger> watchFencingLabelChanges(KubernetesClient admin, String group) {
        Map<String, AtomicInteger> changes = new ConcurrentHashMap<>();
        watch(admin.nodes().withLabel(NodeLabels.GROUP, group), (old, node) -> {
            if (old != null && !fencingLabels(old).equals(fencingLabels(node))) {
                changes.computeIfAbsent(node.getMetadata().getName(), k -> new AtomicInteger()).incrementAndGet();
            }
        });
        return changes;
    }

    private static Map<String, String> fencingLabels(Node node) {
        Map<String, String> labels = new java.util.TreeMap<>(node.getMetadata().getLabels());
        labels.keySet().retainAll(List.of(NodeLabels.FENCING_ENABLED, NodeLabels.FENCING_MODE));
        return labels;
    }

    // Counts updates of the agent DaemonSet that changed what the controller writes (spec, labels, annotations),
    // not the DaemonSet controller's status updates.
    private AtomicInteger watchDaemonSetRewrites(KubernetesClient admin, String namespace, String group) {
        AtomicInteger rewrites = new AtomicInteger();
        watch(admin.apps().daemonSets().inNamespace(namespace).withName(AgentDaemonSetFactory.name(group)),
                (old, ds) -> {
                    if (old != null && (!Objects.equals(old.getSpec(), ds.getSpec())
                            || !Objects.equals(old.getMetadata().getLabels(), ds.getMetadata().getLabels())
                            || !Objects.equals(old.getMetadata().getAnnotations(),
                                    ds.getMetadata().getAnnotations()))) {
                        rewrites.incrementAndGet();
                    }
                });
        return rewrites;
    }

    /** A state of the election Lease and when this test saw it (wall clock, as the electors write renewTime). */
    private record SeenLease(Lease lease, java.time.Instant seenAt) {
    }

    private List<SeenLease> watchLease(KubernetesClient admin, String namespace, String name) {
        List<SeenLease> history = new CopyOnWriteArrayList<>();
        watch(admin.leases().inNamespace(namespace).withName(name),
                (old, lease) -> history.add(new SeenLease(lease, java.time.Instant.now())));
        return history;
    }

    // Every added (old = null) and updated object of an informer, closed after the test.
    private <T> void watch(Informable<T> source, BiConsumer<T, T> change) {
        SharedIndexInformer<T> informer = source.inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(T object) {
                change.accept(null, object);
            }

            @Override
            public void onUpdate(T old, T object) {
                change.accept(old, object);
            }

            @Override
            public void onDelete(T object, boolean unknownFinalState) {
            }
        }, 0);
        closing.add(informer::close);
    }
}
