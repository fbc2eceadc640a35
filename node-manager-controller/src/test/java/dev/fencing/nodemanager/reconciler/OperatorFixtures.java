package dev.fencing.nodemanager.reconciler;

import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.FencingWatchdog;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.grpc.TestAgent;
import dev.fencing.nodemanager.grpc.auth.TestAgentPods;
import dev.fencing.nodemanager.testing.NodeGroupCrds;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.Channel;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** What the operator tests on the CRUD mock share: the CRD, a Watchdog group, an agent that got its first config. */
final class OperatorFixtures {

    private OperatorFixtures() {
    }

    static void installNodeGroupCrd(KubernetesClient client) {
        NodeGroupCrds.install(client);
    }

    static NodeGroup watchdogGroup(String name) {
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName(name).build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing().withMode("Watchdog")
                .withWatchdog(new FencingWatchdog().withTimeout("60s"))));
        return g;
    }

    /**
     * An agent of {@code node} (authenticated by its agent pod's token) whose first message (kept in its queue) has
     * arrived; retried until served.
     */
    static TestAgent connectServed(Channel channel, TestAgentPods pods, String node) {
        return await().atMost(10, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(100)).until(() -> {
            TestAgent a = TestAgent.connect(channel, node, pods.token(node));
            ControllerMessage first = a.received.poll(2, TimeUnit.SECONDS);
            if (first == null) {
                a.close();
                return null;
            }
            a.received.add(first);
            return a;
        }, a -> a != null);
    }
}
