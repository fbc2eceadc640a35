package dev.fencing.api.fencing.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The example in api/examples reads into the model as its comments say. */
class ExampleNodeFencingConfigTest {

    @Test
    void exampleReadsAsTwoStagesARecoveryAndKdump() throws Exception {
        NodeFencingConfig config;
        try (InputStream in = Files.newInputStream(Path.of("examples", "nodefencingconfig-ipmi.yaml"))) {
            config = new KubernetesSerialization().unmarshal(in, NodeFencingConfig.class);
        }
        NodeFencingConfigSpec spec = config.getSpec();
        assertThat(spec.stages()).extracting(FenceStage::name).containsExactly("bmc", "pdu");
        assertThat(spec.stages().get(0).policyOrDefault()).isEqualTo(ExecutionPolicy.One);
        assertThat(spec.stages().get(1).policyOrDefault()).isEqualTo(ExecutionPolicy.All);
        assertThat(spec.stages().get(1).mustSucceedOrDefault()).isTrue();
        assertThat(spec.stages().get(0).methods().get(0).secretParameters().get(0).secretRef().key())
                .isEqualTo("password");
        assertThat(spec.recovery().methods()).extracting(FenceMethod::agent).containsExactly("fence_ipmilan");
        assertThat(spec.kdump().enabledOrDefault()).isTrue();
        assertThat(Durations.parse("kdump.timeout", spec.kdump().timeout(), Duration.ZERO))
                .isEqualTo(Duration.ofMinutes(10));
    }
}
