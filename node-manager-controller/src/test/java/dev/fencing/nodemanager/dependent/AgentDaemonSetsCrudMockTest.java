package dev.fencing.nodemanager.dependent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.config.ControllerConfig;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import org.junit.jupiter.api.Test;

/**
 * Why the operator tests on the fabric8 CRUD mock run with {@code --no-server-side-apply}: the mock refuses an apply
 * patch, so only the create / update-on-hash path can run there (both paths run on a real API server in
 * {@code AgentDaemonSetApplyRealApiTest}).
 */
@EnableKubernetesMockClient(crud = true)
class AgentDaemonSetsCrudMockTest {

    KubernetesClient client;

    private static NodeGroup group() {
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName("workers").withUid("uid-1").build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing()));
        return g;
    }

    @Test
    void theCrudMockTakesCreateAndUpdateOnHash() {
        AgentDaemonSets daemonSets = new AgentDaemonSets(client, ControllerConfig.forTests("ns"));
        assertThat(daemonSets.apply(group())).isEqualTo(AgentDaemonSets.Outcome.CREATED);
        assertThat(daemonSets.apply(group())).isEqualTo(AgentDaemonSets.Outcome.UNCHANGED);
    }

    @Test
    void theCrudMockRefusesServerSideApply() {
        AgentDaemonSets daemonSets = new AgentDaemonSets(client,
                ControllerConfig.forTests("ns").withServerSideApply(true));
        // An apply that would create: the mock patches only what exists.
        assertThatThrownBy(() -> daemonSets.apply(group())).isInstanceOfSatisfying(KubernetesClientException.class,
                e -> assertThat(e.getCode()).isEqualTo(404));
        assertThat(client.apps().daemonSets().inNamespace("ns").list().getItems()).isEmpty();

        // An apply to an existing object: the mock knows no apply patch type.
        new AgentDaemonSets(client, ControllerConfig.forTests("ns")).apply(group());
        assertThatThrownBy(() -> daemonSets.apply(group())).isInstanceOfSatisfying(KubernetesClientException.class,
                e -> assertThat(e.getCode()).isEqualTo(415));
    }
}
