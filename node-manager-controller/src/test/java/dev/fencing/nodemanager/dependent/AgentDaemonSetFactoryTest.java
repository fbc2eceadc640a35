package dev.fencing.nodemanager.dependent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.nodemanager.config.AgentControlSecurity;
import dev.fencing.nodemanager.config.AgentPodSettings;
import dev.fencing.nodemanager.config.ControllerConfig;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import java.time.Duration;
import java.util.List;
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
                .doesNotContain("CharDevice");
    }

    private static Container agent(ControllerConfig config) {
        return AgentDaemonSetFactory.desired(group(), config).getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    private static Map<String, String> hostPaths(io.fabric8.kubernetes.api.model.PodSpec pod, Container container) {
        Map<String, String> byMount = new java.util.TreeMap<>();
        for (var m : container.getVolumeMounts()) {
            pod.getVolumes().stream().filter(v -> v.getName().equals(m.getName()) && v.getHostPath() != null)
                    .forEach(v -> byMount.put(m.getMountPath(), v.getHostPath().getPath() + " "
                            + v.getHostPath().getType() + (Boolean.TRUE.equals(m.getReadOnly()) ? " ro" : " rw")));
        }
        return byMount;
    }

    @Test
    void theAgentRunsWithTheSocketDirectoryTheHostDevWatchdogAndTheMetricsPort() {
        Container agent = agent(ControllerConfig.forTests("ns"));
        assertThat(agent.getArgs()).startsWith("run", "--controller", "node-manager-controller.ns.svc:9650",
                        "--node", "$(NODE_NAME)")
                .containsSequence("--socket", "/var/run/fencing-agent/fencing-agent.sock")
                .containsSequence("--watchdog-device", "/host/dev/watchdog")
                .containsSequence("--metrics-port", "9652")
                .containsSequence("--token-file", AgentControlSecurity.AGENT_TOKEN_FILE);
        assertThat(agent.getPorts()).extracting(p -> p.getName() + "=" + p.getContainerPort() + "/" + p.getProtocol())
                .containsExactly("gossip-tcp=9651/TCP", "gossip-udp=9651/UDP", "metrics=9652/TCP");
    }

    @Test
    void onlyTheSocketDirectoryTheHostDevReadOnlyAndTheStateDirComeFromTheHost() {
        var pod = AgentDaemonSetFactory.desired(group(), ControllerConfig.forTests("ns")).getSpec().getTemplate()
                .getSpec();
        // A missing /dev/watchdog must not keep the pod in ContainerCreating: /dev is a Directory that always exists.
        assertThat(hostPaths(pod, pod.getContainers().get(0))).containsExactlyEntriesOf(new java.util.TreeMap<>(Map.of(
                "/host/dev", "/dev Directory ro",
                "/var/run/fencing-agent", "/var/run/fencing-agent DirectoryOrCreate rw",
                "/var/lib/fencing-agent", "/var/lib/fencing-agent DirectoryOrCreate rw")));
        var tmp = pod.getVolumes().stream().filter(v -> v.getEmptyDir() != null).findFirst().orElseThrow();
        assertThat(tmp.getEmptyDir().getSizeLimit()).isEqualTo(new Quantity("32Mi"));
        assertThat(tmp.getEmptyDir().getMedium()).as("disk, outside the JVM's memory budget").isNull();
        assertThat(pod.getContainers().get(0).getVolumeMounts())
                .anySatisfy(m -> assertThat(m.getName() + " " + m.getMountPath()).isEqualTo(tmp.getName() + " /tmp"));
    }

    @Test
    void theSocketLinkInitContainerIsUnprivilegedRootWithNoCapabilitiesAndOnlyTheHostVarRun() {
        ControllerConfig config = ControllerConfig.forTests("ns");
        var pod = AgentDaemonSetFactory.desired(group(), config).getSpec().getTemplate().getSpec();
        assertThat(pod.getInitContainers()).hasSize(1);
        Container link = pod.getInitContainers().get(0);

        assertThat(link.getName()).isEqualTo("socket-link");
        assertThat(link.getImage()).isEqualTo(config.agentImage());
        assertThat(link.getArgs()).containsExactly("socket-link", "--link", "/host/var/run/fencing-agent.sock",
                "--target", "fencing-agent/fencing-agent.sock");
        var security = link.getSecurityContext();
        assertThat(security.getPrivileged()).isFalse();
        assertThat(security.getAllowPrivilegeEscalation()).isFalse();
        assertThat(security.getRunAsUser()).isZero();
        assertThat(security.getReadOnlyRootFilesystem()).isTrue();
        assertThat(security.getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(security.getCapabilities().getAdd()).isNullOrEmpty();
        assertThat(hostPaths(pod, link)).containsExactly(Map.entry("/host/var/run", "/var/run Directory rw"));
        assertThat(hostPaths(pod, pod.getContainers().get(0))).as("the agent does not see all of /var/run")
                .doesNotContainKey("/var/run").doesNotContainKey("/host/var/run");
    }

    @Test
    void probesWatchHealthzAndReadyzOnTheLoopbackProbePortWithTimeForTheJvmToStart() {
        Container agent = agent(ControllerConfig.forTests("ns"));
        assertThat(agent.getStartupProbe().getHttpGet().getPath()).isEqualTo("/healthz");
        assertThat(agent.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
        assertThat(agent.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
        for (var probe : List.of(agent.getStartupProbe(), agent.getLivenessProbe(), agent.getReadinessProbe())) {
            // the node's loopback (hostNetwork), which no pod can reach and so none can hold its request threads
            assertThat(probe.getHttpGet().getHost()).isEqualTo("127.0.0.1");
            assertThat(probe.getHttpGet().getPort().getIntVal()).isEqualTo(AgentPodSettings.DEFAULT_PROBE_PORT);
            assertThat(probe.getTimeoutSeconds()).isPositive();
        }
        var startup = agent.getStartupProbe();
        assertThat(startup.getPeriodSeconds() * startup.getFailureThreshold())
                .isEqualTo(AgentDaemonSetFactory.STARTUP_SECONDS);
        var liveness = agent.getLivenessProbe();
        assertThat(liveness.getPeriodSeconds() * liveness.getFailureThreshold()).as("a stuck loop is restarted"
                + " within a minute, a single slow answer is not").isBetween(20, 60);
    }

    @Test
    void withTheMetricsPortOffTheProbesStayOnLoopbackAndWithBothOffThereAreNone() {
        Container loopbackOnly = agent(ControllerConfig.forTests("ns")
                .withAgentPod(new AgentPodSettings(0, "", List.of())));
        assertThat(loopbackOnly.getArgs()).containsSequence("--metrics-port", "0")
                .containsSequence("--probe-port", "9653");
        assertThat(loopbackOnly.getPorts()).extracting(p -> p.getName()).doesNotContain("metrics");
        assertThat(loopbackOnly.getLivenessProbe().getHttpGet().getHost()).isEqualTo("127.0.0.1");

        Container metricsProbed = agent(ControllerConfig.forTests("ns")
                .withAgentPod(new AgentPodSettings(9652, "", List.of(), List.of(), "", 0)));
        assertThat(metricsProbed.getArgs()).doesNotContain("--probe-port");
        assertThat(metricsProbed.getLivenessProbe().getHttpGet().getHost()).isNull();
        assertThat(metricsProbed.getLivenessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("metrics");

        ControllerConfig off = ControllerConfig.forTests("ns")
                .withAgentPod(new AgentPodSettings(0, "", List.of(), List.of(), "", 0));
        Container agent = agent(off);
        assertThat(agent.getArgs()).containsSequence("--metrics-port", "0").doesNotContain("--probe-port");
        assertThat(agent.getStartupProbe()).isNull();
        assertThat(agent.getLivenessProbe()).isNull();
        assertThat(agent.getReadinessProbe()).isNull();
    }

    @Test
    void pullPolicyAndPullSecretsReachBothContainersAndThePod() {
        ControllerConfig config = ControllerConfig.forTests("ns").withAgentPod(new AgentPodSettings(9652, "Always",
                List.of("regcred", "mirror.example")));
        var pod = AgentDaemonSetFactory.desired(group(), config).getSpec().getTemplate().getSpec();
        assertThat(pod.getImagePullSecrets()).extracting(r -> r.getName()).containsExactly("regcred",
                "mirror.example");
        assertThat(pod.getContainers().get(0).getImagePullPolicy()).isEqualTo("Always");
        assertThat(pod.getInitContainers().get(0).getImagePullPolicy()).isEqualTo("Always");

        var defaults = AgentDaemonSetFactory.desired(group(), ControllerConfig.forTests("ns")).getSpec().getTemplate()
                .getSpec();
        assertThat(defaults.getImagePullSecrets()).isEmpty();
        assertThat(defaults.getContainers().get(0).getImagePullPolicy()).as("Kubernetes' default").isNull();
    }

    @Test
    void theAgentLogLevelAndFormatReachTheAgentArgsOnlyWhenSet() {
        ControllerConfig config = ControllerConfig.forTests("ns").withAgentPod(new AgentPodSettings(9652, "",
                List.of(), List.of("debug", "io.grpc=warn"), "json"));
        assertThat(agent(config).getArgs()).containsSequence("--log-level", "debug,io.grpc=warn")
                .containsSequence("--log-format", "json");

        assertThat(agent(ControllerConfig.forTests("ns")).getArgs()).as("defaults leave the pod template as it was")
                .doesNotContain("--log-level", "--log-format");
    }

    @Test
    void badAgentLogSettingsAreRefusedNamingTheControllerFlag() {
        assertThatThrownBy(() -> new AgentPodSettings(9652, "", List.of(), List.of("loud"), ""))
                .hasMessageStartingWith("--agent-log-level loud: expected one of error|warn|info|debug|trace");
        assertThatThrownBy(() -> new AgentPodSettings(9652, "", List.of(), List.of(), "xml"))
                .hasMessage("--agent-log-format xml: expected text or json");
    }

    @Test
    void badAgentPodSettingsAreRefusedNamingTheFlag() {
        assertThatThrownBy(() -> new AgentPodSettings(9652, "", List.of(), List.of(), "", 9652))
                .hasMessageContaining("--agent-probe-port 9652 is --agent-metrics-port too");
        assertThatThrownBy(() -> new AgentPodSettings(9652, "", List.of(), List.of(), "", 70000))
                .hasMessageContaining("--agent-probe-port 70000");
        assertThatThrownBy(() -> new AgentPodSettings(65536, "", List.of()))
                .hasMessageContaining("--agent-metrics-port 65536");
        assertThatThrownBy(() -> new AgentPodSettings(-1, "", List.of()))
                .hasMessageContaining("--agent-metrics-port -1");
        assertThatThrownBy(() -> new AgentPodSettings(9652, "Sometimes", List.of()))
                .hasMessageContaining("--agent-image-pull-policy Sometimes").hasMessageContaining("IfNotPresent");
        assertThatThrownBy(() -> new AgentPodSettings(9652, "", List.of("Reg_Cred")))
                .hasMessageContaining("--agent-image-pull-secret Reg_Cred");
        assertThatThrownBy(() -> ControllerConfig.forTests("ns").withAgentPod(new AgentPodSettings(9651, "",
                List.of()))).hasMessageContaining("--agent-metrics-port 9651 is the gossip port");
        assertThatThrownBy(() -> ControllerConfig.forTests("ns").withAgentPod(new AgentPodSettings(9652, "",
                List.of(), List.of(), "", 9651))).hasMessageContaining("--agent-probe-port 9651 is the gossip port");
    }

    @Test
    void everyTaintIsToleratedByDefaultAndThePriorityClassIsOptional() {
        var pod = AgentDaemonSetFactory.desired(group(), ControllerConfig.forTests("ns")).getSpec().getTemplate()
                .getSpec();
        assertThat(pod.getTolerations()).singleElement().satisfies(t -> {
            assertThat(t.getOperator()).isEqualTo("Exists");
            assertThat(t.getKey()).isNull();
            assertThat(t.getEffect()).isNull();
        });
        assertThat(pod.getPriorityClassName()).isEqualTo("system-node-critical");
        ControllerConfig c = ControllerConfig.forTests("ns");
        ControllerConfig none = new ControllerConfig(c.namespace(), 0, -1, c.gossipPort(), c.agentImage(),
                c.agentControllerAddress(), c.agentResources(), c.agentTolerations(), "", false, "l", null, null,
                Duration.ofSeconds(1), Duration.ofSeconds(30), 10, 10, Duration.ofSeconds(30), 1, true, "127.0.0.1");
        assertThat(AgentDaemonSetFactory.desired(group(), none).getSpec().getTemplate().getSpec()
                .getPriorityClassName()).isNull();
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
