package dev.fencing.nodemanager.dependent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.config.AgentControlSecurity;
import dev.fencing.nodemanager.config.ControllerConfig;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AgentDaemonSetFactoryTest {

    private static NodeGroup group() {
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName("workers").withUid("uid-1").build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing().withMode("Watchdog")));
        return g;
    }

    @Test
    void theAgentPodIsPrivilegedOnlyForTheDeviceRunsOnHostNetworkWithoutAnApiToken() {
        ControllerConfig config = ControllerConfig.forTests("ns");
        DaemonSet ds = AgentDaemonSetFactory.desired(group(), config);
        var pod = ds.getSpec().getTemplate().getSpec();
        Container agent = pod.getContainers().get(0);

        assertThat(ds.getMetadata().getName()).isEqualTo("fencing-agent-workers");
        assertThat(ds.getMetadata().getOwnerReferences().get(0).getUid()).isEqualTo("uid-1");
        assertThat(pod.getHostNetwork()).isTrue();
        assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        assertThat(pod.getTolerations()).isEqualTo(config.agentTolerations());
        assertThat(agent.getImage()).isEqualTo(config.agentImage());
        assertThat(agent.getSecurityContext().getPrivileged()).isTrue();
        assertThat(agent.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(agent.getEnv().get(0).getValueFrom().getFieldRef().getFieldPath()).isEqualTo("spec.nodeName");
        assertThat(agent.getResources().getRequests()).containsKeys("cpu", "memory");
        assertThat(agent.getResources().getLimits()).containsKey("memory");
        assertThat(pod.getVolumes()).filteredOn(v -> v.getHostPath() != null).extracting(v -> v.getHostPath().getType())
                .containsExactly("CharDevice", "Directory", "DirectoryOrCreate");
    }

    @Test
    void theDesiredHashDoesNotDependOnMapIterationOrderSoAnotherReplicaSeesNoChange() {
        DaemonSet ds = AgentDaemonSetFactory.desired(group(), ControllerConfig.forTests("ns"));
        DaemonSet reordered = AgentDaemonSetFactory.desired(group(), ControllerConfig.forTests("ns"));
        var resources = reordered.getSpec().getTemplate().getSpec().getContainers().get(0).getResources();
        java.util.LinkedHashMap<String, Quantity> reversed = new java.util.LinkedHashMap<>();
        java.util.List<String> keys = new java.util.ArrayList<>(resources.getRequests().keySet());
        java.util.Collections.reverse(keys);
        keys.forEach(k -> reversed.put(k, resources.getRequests().get(k)));
        resources.setRequests(reversed);
        java.util.LinkedHashMap<String, String> labels = new java.util.LinkedHashMap<>();
        java.util.List<String> labelKeys = new java.util.ArrayList<>(reordered.getMetadata().getLabels().keySet());
        java.util.Collections.reverse(labelKeys);
        labelKeys.forEach(k -> labels.put(k, ds.getMetadata().getLabels().get(k)));
        reordered.getMetadata().setLabels(labels);

        assertThat(AgentDaemonSetFactory.hash(reordered)).isEqualTo(AgentDaemonSetFactory.hash(ds));
        reordered.getSpec().getTemplate().getSpec().getContainers().get(0).setImage("other:1");
        assertThat(AgentDaemonSetFactory.hash(reordered)).isNotEqualTo(AgentDaemonSetFactory.hash(ds));
    }

    @Test
    void theAgentJvmHasAnExplicitHeapExitsOnOutOfMemoryAndFitsItsMemoryLimit() {
        Container agent = AgentDaemonSetFactory.desired(group(), ControllerConfig.forTests("ns")).getSpec()
                .getTemplate().getSpec().getContainers().get(0);
        String options = agent.getEnv().stream().filter(e -> e.getName().equals("JAVA_TOOL_OPTIONS"))
                .map(e -> e.getValue()).findFirst().orElseThrow();
        assertThat(options.split(" ")).contains("-Xmx64m", "-XX:+ExitOnOutOfMemoryError",
                "-XX:MaxDirectMemorySize=32m", "-XX:MaxMetaspaceSize=64m");
        assertThat(Quantity.getAmountInBytes(agent.getResources().getLimits().get("memory")))
                .isGreaterThanOrEqualTo(Quantity.getAmountInBytes(new Quantity("192Mi")));
    }

    @Test
    void withoutAConfiguredLimitTheAgentGetsTheJvmBudgetAsItsLimit() {
        ControllerConfig base = ControllerConfig.forTests("ns");
        ControllerConfig noLimit = new ControllerConfig("ns", 0, -1, 7946, base.agentImage(),
                base.agentControllerAddress(), Map.of("requests.cpu", "10m"), base.agentTolerations(),
                base.agentPriorityClass(), false, "l", null, null, Duration.ofSeconds(1), Duration.ofSeconds(30),
                10, 10, Duration.ofSeconds(30), 1, true, "127.0.0.1");
        Container agent = AgentDaemonSetFactory.desired(group(), noLimit).getSpec().getTemplate().getSpec()
                .getContainers().get(0);
        assertThat(agent.getResources().getLimits()).containsEntry("memory", new Quantity("192Mi"));
    }

    @Test
    void aMemoryLimitBelowTheJvmBudgetIsRefusedNamingTheFlag() {
        ControllerConfig base = ControllerConfig.forTests("ns");
        assertThatThrownBy(() -> new ControllerConfig("ns", 0, -1, 7946, base.agentImage(),
                base.agentControllerAddress(), Map.of("limits.memory", "128Mi"), base.agentTolerations(),
                base.agentPriorityClass(), false, "l", null, null, Duration.ofSeconds(1), Duration.ofSeconds(30),
                10, 10, Duration.ofSeconds(30), 1, true, "127.0.0.1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--agent-resource limits.memory=128Mi").hasMessageContaining("192Mi");
    }

    @Test
    void theAgentGetsAProjectedTokenForTheFencingAgentAudienceAndTheControllerCa() {
        ControllerConfig base = ControllerConfig.forTests("ns");
        ControllerConfig config = base.withSecurity(new java.io.File("/tls/tls.crt"), new java.io.File("/tls/tls.key"),
                new AgentControlSecurity(false, null, "fencing-ca", "fencing-agent", Duration.ofSeconds(30)));
        var pod = AgentDaemonSetFactory.desired(group(), config).getSpec().getTemplate().getSpec();
        Container agent = pod.getContainers().get(0);

        var token = pod.getVolumes().stream().filter(v -> v.getProjected() != null).findFirst().orElseThrow()
                .getProjected().getSources().get(0).getServiceAccountToken();
        assertThat(token.getAudience()).isEqualTo("fencing-agent");
        assertThat(token.getExpirationSeconds()).isEqualTo(3600L);
        assertThat(pod.getServiceAccountName()).isEqualTo("fencing-agent");
        assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        assertThat(pod.getVolumes()).filteredOn(v -> v.getSecret() != null)
                .extracting(v -> v.getSecret().getSecretName()).containsExactly("fencing-ca");
        assertThat(agent.getVolumeMounts()).filteredOn(m -> m.getMountPath().startsWith("/etc/fencing-agent"))
                .allMatch(m -> Boolean.TRUE.equals(m.getReadOnly())).hasSize(2);
        assertThat(agent.getArgs()).containsSequence("--token-file", AgentControlSecurity.AGENT_TOKEN_FILE)
                .containsSequence("--controller-ca", AgentControlSecurity.AGENT_CA_FILE)
                .doesNotContain("--insecure-plaintext");
    }

    @Test
    void theDesiredHashIsStableAndFollowsTheConfig() {
        ControllerConfig config = ControllerConfig.forTests("ns");
        String h1 = AgentDaemonSetFactory.desired(group(), config).getMetadata().getAnnotations()
                .get(AgentDaemonSetFactory.HASH_ANNOTATION);
        String h2 = AgentDaemonSetFactory.desired(group(), config).getMetadata().getAnnotations()
                .get(AgentDaemonSetFactory.HASH_ANNOTATION);
        ControllerConfig other = new ControllerConfig("ns", 0, -1, 7946, "registry.example/fencing-agent:v2",
                config.agentControllerAddress(), config.agentResources(), config.agentTolerations(),
                config.agentPriorityClass(), false, "l", null, null, Duration.ofSeconds(1), Duration.ofSeconds(30),
                10, 10, Duration.ofSeconds(30), 1, true, "127.0.0.1");
        String h3 = AgentDaemonSetFactory.desired(group(), other).getMetadata().getAnnotations()
                .get(AgentDaemonSetFactory.HASH_ANNOTATION);
        assertThat(h1).isEqualTo(h2).isNotEqualTo(h3);
    }
}
