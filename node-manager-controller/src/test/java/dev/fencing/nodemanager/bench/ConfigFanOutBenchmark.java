package dev.fencing.nodemanager.bench;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.FencingWatchdog;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.grpc.auth.BearerTokenCredentials;
import dev.fencing.nodemanager.grpc.auth.TestAgentPods;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.model.NodeLabels;
import dev.fencing.nodemanager.testing.CrudMockExtension;
import dev.fencing.nodemanager.testing.NodeGroupCrds;
import dev.fencing.proto.nodemanager.v1.AgentControlGrpc;
import dev.fencing.proto.nodemanager.v1.AgentHello;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import io.fabric8.kubernetes.api.model.NodeAddressBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * 1000 Nodes in one group, 1000 agent streams on the controller's real AgentControl port (one HTTP/2 connection),
 * the controller fed by informers on the fabric8 CRUD mock API server. Each round changes one Node's addresses through
 * the API and measures the time until the last agent has received the resulting delta, plus bytes streamed per change
 * and heap. Prints figures; never fails on timing.
 *
 * <p>Run: {@code ./mvnw -o -pl node-manager-controller test-compile exec:java -Dexec.classpathScope=test
 * [-Dexec.args="<nodes> <changes>"]}
 */
public final class ConfigFanOutBenchmark {

    private static volatile boolean shuttingDown;

    private ConfigFanOutBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int changes = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        KubernetesMockServer api = CrudMockExtension.startServer();
        KubernetesClient client = api.createClient();
        NodeGroupCrds.install(client);
        NodeGroup group = new NodeGroup();
        group.setMetadata(new ObjectMetaBuilder().withName("bench").build());
        group.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing().withMode("Watchdog")
                .withWatchdog(new FencingWatchdog().withTimeout("60s"))));
        client.resource(group).create();
        for (int i = 0; i < n; i++) {
            client.nodes().resource(new NodeBuilder()
                    .withNewMetadata().withName(name(i)).addToLabels(NodeLabels.GROUP, "bench").endMetadata()
                    .withNewStatus().addNewAddress().withType("InternalIP")
                    .withAddress("198.18." + (i / 250) + "." + (i % 250 + 1)).endAddress().endStatus()
                    .build()).create();
        }
        long heapBefore = usedHeapAfterGc();

        ControllerConfig t = ControllerConfig.forTests("bench");
        ControllerConfig config = new ControllerConfig("bench", 0, -1, 7946, t.agentImage(),
                t.agentControllerAddress(), t.agentResources(), t.agentTolerations(), t.agentPriorityClass(), false,
                "l", null, null, Duration.ofSeconds(30), Duration.ofSeconds(30), 4096, 4096, Duration.ofSeconds(30), 1, true, "127.0.0.1");
        NodeManager manager = new NodeManager(client, config, InstantSource.system(),
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).start();
        long heapStarted = usedHeapAfterGc();
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", manager.grpcPort()).usePlaintext()
                .build();

        Tracker tracker = new Tracker(changes, n);
        CountDownLatch synced = new CountDownLatch(n);
        AtomicLong fullBytes = new AtomicLong();
        List<StreamObserver<AgentMessage>> streams = new ArrayList<>();
        TestAgentPods pods = new TestAgentPods(api, client, "bench");
        List<String> tokens = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            tokens.add(pods.token(name(i)));
        }
        long connectStart = System.nanoTime();
        for (int i = 0; i < n; i++) {
            streams.add(AgentControlGrpc.newStub(channel)
                    .withCallCredentials(new BearerTokenCredentials(tokens.get(i))).connect(new StreamObserver<>() {
                boolean first = true;

                @Override
                public void onNext(ControllerMessage m) {
                    long now = System.nanoTime();
                    if (first && m.hasFull() && m.getFull().getMembersCount() == n) {
                        first = false;
                        fullBytes.set(m.getSerializedSize());
                        synced.countDown();
                    } else if (m.getDelta().hasMemberUpserted()) {
                        String ext = m.getDelta().getMemberUpserted().getAddressesMap().get("ExternalIP");
                        if (ext != null) {
                            tracker.arrived(Integer.parseInt(ext.substring(ext.lastIndexOf('.') + 1))
                                    + 250 * Integer.parseInt(ext.split("\\.")[2]), now);
                        }
                    }
                }

                @Override
                public void onError(Throwable e) {
                    if (!shuttingDown) {
                        System.err.println("stream failed: " + e);
                    }
                }

                @Override
                public void onCompleted() {
                }
            }));
            streams.get(i).onNext(AgentMessage.newBuilder().setHello(AgentHello.newBuilder().setNodeName(name(i))
                    .setAgentVersion("bench")).build());
        }
        if (!synced.await(120, TimeUnit.SECONDS)) {
            throw new IllegalStateException("only " + (n - synced.getCount()) + " of " + n + " agents synced");
        }
        long connectMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - connectStart);
        long heapConnected = usedHeapAfterGc();

        long[] latencies = new long[changes];
        long bytesBefore = manager.service().bytesSent();
        long messagesBefore = manager.service().messagesSent();
        for (int k = 0; k < changes; k++) {
            String target = name((k * 37) % n);
            String ext = "198.19." + (k / 250) + "." + (k % 250);
            long start = System.nanoTime();
            tracker.start(k, start);
            client.nodes().withName(target).edit(node -> {
                node.getStatus().getAddresses().removeIf(a -> "ExternalIP".equals(a.getType()));
                node.getStatus().getAddresses().add(new NodeAddressBuilder().withType("ExternalIP")
                        .withAddress(ext).build());
                return node;
            });
            if (!tracker.await(k, 30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("change " + k + " reached only " + tracker.count(k) + " agents");
            }
            latencies[k] = tracker.lastArrival(k) - start;
        }
        long bytesPerChange = (manager.service().bytesSent() - bytesBefore) / changes;
        long messagesPerChange = (manager.service().messagesSent() - messagesBefore) / changes;
        Arrays.sort(latencies);

        System.out.printf("%nConfigFanOutBenchmark: %d nodes in one group, %d agent streams, %d node changes"
                + " through the CRUD mock API server%n", n, n, changes);
        System.out.printf("  connect + full config for all agents: %d ms; full config size: %d bytes%n", connectMs,
                fullBytes.get());
        System.out.printf("  node change -> last agent received delta: p50 %.1f ms, p99 %.1f ms, max %.1f ms%n",
                ms(latencies[changes / 2]), ms(latencies[Math.min(changes - 1, (int) Math.ceil(changes * 0.99) - 1)]),
                ms(latencies[changes - 1]));
        System.out.printf("  streamed per change: %d messages, %d bytes total, %.1f bytes per agent%n",
                messagesPerChange, bytesPerChange, bytesPerChange / (double) n);
        System.out.printf("  heap used after GC: %.1f MiB before controller start, %.1f MiB controller started"
                + " (caches of %d Nodes), %.1f MiB with %d streams (agent side in the same JVM)%n",
                heapBefore / 1048576.0, heapStarted / 1048576.0, n, heapConnected / 1048576.0, n);

        shuttingDown = true;
        streams.forEach(StreamObserver::onCompleted);
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        manager.close();
        client.close();
        api.destroy();
        System.exit(0);
    }

    private static String name(int i) {
        return String.format("bench-%04d", i);
    }

    private static double ms(long nanos) {
        return nanos / 1_000_000.0;
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** Per change: how many agents received it and when the last one did. */
    private static final class Tracker {
        private final int agents;
        private final AtomicInteger[] counts;
        private final AtomicLong[] last;
        private final CountDownLatch[] done;

        Tracker(int changes, int agents) {
            this.agents = agents;
            counts = new AtomicInteger[changes];
            last = new AtomicLong[changes];
            done = new CountDownLatch[changes];
            for (int i = 0; i < changes; i++) {
                counts[i] = new AtomicInteger();
                last[i] = new AtomicLong();
                done[i] = new CountDownLatch(1);
            }
        }

        void start(int k, long nanos) {
            last[k].set(nanos);
        }

        void arrived(int k, long nanos) {
            if (k < 0 || k >= counts.length) {
                return;
            }
            last[k].accumulateAndGet(nanos, Math::max);
            if (counts[k].incrementAndGet() == agents) {
                done[k].countDown();
            }
        }

        boolean await(int k, long timeout, TimeUnit unit) throws InterruptedException {
            return done[k].await(timeout, unit);
        }

        int count(int k) {
            return counts[k].get();
        }

        long lastArrival(int k) {
            return last[k].get();
        }
    }
}
