package dev.fencing.nodemanager.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.dependent.AgentDaemonSets;
import dev.fencing.nodemanager.report.AgentReports;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.InstantSource;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * JOSDK keeps processing events after the Lease is lost; until the replica has exited, a reconcile must not write
 * anything. Every collaborator that could write is absent here: a reconcile that went past the leadership check
 * would fail on it at once.
 */
class DeposedLeaderReconcileTest {

    @Test
    void aReplicaThatNoLongerLeadsWritesNothing() {
        ControllerConfig config = ControllerConfig.forTests("ns");
        NodeGroupReconciler reconciler = new NodeGroupReconciler(config, (AgentDaemonSets) null, null,
                new AgentReports(), null, InstantSource.system(), () -> false, n -> Optional.empty(),
                WriteLimits.DEFAULTS, null, null);
        NodeGroup group = new NodeGroup();
        group.setMetadata(new ObjectMetaBuilder().withName("workers").withUid("u-1").build());

        UpdateControl<NodeGroup> control = reconciler.reconcile(group, null);

        assertThat(control.isNoUpdate()).isTrue();
    }
}
