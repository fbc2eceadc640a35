package dev.fencing.api.v1;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.policy.ResolvedPolicy;
import dev.fencing.policy.TieBreakerKind;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The example in api/examples stays valid and means what its comments say. */
class ExampleNodeGroupTest {

    @Test
    void exampleIsValidAndResolvesAsDocumented() throws Exception {
        NodeGroup ng;
        try (InputStream in = Files.newInputStream(Path.of("examples", "nodegroup-fencing.yaml"))) {
            ng = new KubernetesSerialization().unmarshal(in, NodeGroup.class);
        }
        assertThat(NodeGroupValidator.validate(ng, 5)).isEmpty();
        assertThat(NodeGroupValidator.warnings(ng, 5)).isEmpty();
        ResolvedPolicy policy = NodeGroupFencing.resolve(ng, 5);
        assertThat(policy.quorumSize()).isEqualTo(3);
        assertThat(policy.tieBreakers()).containsExactly(TieBreakerKind.CONTROL_PLANE);
        assertThat(policy.timings().fenceMargin()).isEqualTo(Duration.ofSeconds(10));
        assertThat(policy.timings().profile()).isEqualTo("Auto(n=5)+overrides");
    }
}
