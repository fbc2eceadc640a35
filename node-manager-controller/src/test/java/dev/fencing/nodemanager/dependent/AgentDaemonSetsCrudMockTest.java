package dev.fencing.nodemanager.dependent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.testing.CrudMockClient;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Why the operator tests on the fabric8 CRUD mock run with {@code --no-server-side-apply}: the mock refuses an apply
 * patch, so only the create / update-on-hash path can run there (both paths run on a real API server in
 * {@code AgentDaemonSetApplyRealApiTest}).
 */
@CrudMockClient
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
        assertThat(daemonSets.apply(group()).outcome()).isEqualTo(AgentDaemonSets.Outcome.CREATED);
        assertThat(daemonSets.apply(group()).outcome()).isEqualTo(AgentDaemonSets.Outcome.UNCHANGED);
    }

    /**
     * A new controller leader grants no ControlPlane tie until it waited out its predecessor's grants: an update that
     * would roll the agents waits for that, while a first DaemonSet is created at once.
     */
    @Test
    void anUpdateThatRollsTheAgentsWaitsWhileTheNewLeaderCannotGrantTies() {
        java.util.concurrent.atomic.AtomicReference<Optional<Duration>> hold = new java.util.concurrent.atomic
                .AtomicReference<>(Optional.of(Duration.ofSeconds(40)));
        ControllerConfig config = ControllerConfig.forTests("ns");
        assertThat(new AgentDaemonSets(client, config, n -> Optional.empty(), hold::get).apply(group()).outcome())
                .as("nothing to roll yet").isEqualTo(AgentDaemonSets.Outcome.CREATED);
        String before = current().getMetadata().getResourceVersion();

        ControllerConfig newPods = config.withAgentPod(new dev.fencing.nodemanager.config.AgentPodSettings(9700, "",
                java.util.List.of()));
        AgentDaemonSets daemonSets = new AgentDaemonSets(client, newPods, n -> Optional.empty(), hold::get);
        assertThat(daemonSets.apply(group()).outcome()).isEqualTo(AgentDaemonSets.Outcome.HELD);
        assertThat(current().getMetadata().getResourceVersion()).isEqualTo(before);

        hold.set(Optional.empty());
        assertThat(daemonSets.apply(group()).outcome()).isEqualTo(AgentDaemonSets.Outcome.UPDATED);
        assertThat(current().getSpec().getTemplate().getSpec().getContainers().get(0).getArgs())
                .containsSequence("--metrics-port", "9700");
    }

    private DaemonSet foreign(String ownerUid) {
        DaemonSetBuilder b = new DaemonSetBuilder().withNewMetadata().withName("fencing-agent-workers")
                .withNamespace("ns").addToLabels("heritage", "deckhouse").endMetadata()
                .withNewSpec().withNewTemplate().withNewSpec().addNewContainer().withName("agent")
                .withImage("deckhouse/agent:1").endContainer().endSpec().endTemplate().endSpec();
        if (ownerUid != null) {
            b.editMetadata().addNewOwnerReference().withApiVersion("deckhouse.io/v1").withKind("NodeGroup")
                    .withName("workers").withUid(ownerUid).withController(true).endOwnerReference().endMetadata();
        }
        return client.apps().daemonSets().inNamespace("ns").resource(b.build()).create();
    }

    private DaemonSet current() {
        return client.apps().daemonSets().inNamespace("ns").withName("fencing-agent-workers").get();
    }

    @Test
    void aDaemonSetOfTheGroupsNameWithoutItsOwnerIsNeitherUpdatedNorDeletedAndNamesItsOwner() {
        AgentDaemonSets daemonSets = new AgentDaemonSets(client, ControllerConfig.forTests("ns"));
        DaemonSet before = foreign(null);

        AgentDaemonSets.Applied applied = daemonSets.apply(group());
        assertThat(applied.outcome()).isEqualTo(AgentDaemonSets.Outcome.NOT_OWNED);
        assertThat(applied.daemonSet()).isEqualTo("ns/fencing-agent-workers");
        assertThat(applied.owner()).contains("heritage=deckhouse");
        assertThat(daemonSets.delete("workers", "uid-1")).as("switching fencing off").isFalse();
        assertThat(daemonSets.groupDeleted("workers", "uid-1")).as("deleting the NodeGroup").isFalse();
        assertThat(current().getMetadata().getResourceVersion()).isEqualTo(before.getMetadata().getResourceVersion());

        client.apps().daemonSets().inNamespace("ns").withName("fencing-agent-workers").delete();
        AgentDaemonSets fresh = new AgentDaemonSets(client, ControllerConfig.forTests("ns"));
        assertThat(fresh.apply(group()).outcome()).as("the next reconcile after it is gone")
                .isEqualTo(AgentDaemonSets.Outcome.CREATED);
        assertThat(current().getMetadata().getOwnerReferences()).singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo("uid-1"));
        assertThat(fresh.delete("workers", "uid-1")).isTrue();
    }

    @Test
    void aDaemonSetControlledByAnotherNodeGroupOfTheSameNameIsNotOurs() {
        foreign("uid-of-a-deleted-group");
        AgentDaemonSets.Applied applied = new AgentDaemonSets(client, ControllerConfig.forTests("ns"))
                .apply(group());
        assertThat(applied.outcome()).isEqualTo(AgentDaemonSets.Outcome.NOT_OWNED);
        assertThat(applied.owner()).isEqualTo("NodeGroup workers (uid uid-of-a-deleted-group)");
        assertThat(current().getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
                .isEqualTo("deckhouse/agent:1");
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
