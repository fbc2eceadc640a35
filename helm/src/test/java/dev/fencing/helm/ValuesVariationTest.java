package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.nodemanager.NodeManagerOperator;
import dev.fencing.nodemanager.config.AgentPodSettings;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ValuesVariationTest {

    @Test
    void crdsInstallRendersTheGeneratedNodeGroupCrdKeptOnUninstall() throws IOException {
        Rendered r = FencingChart.render("crds.install", true);

        CustomResourceDefinition crd = r.one(CustomResourceDefinition.class);
        CustomResourceDefinition generated = FencingChart.parse(
                Files.readString(OptionalCrdCopyTest.generatedCrd()), CustomResourceDefinition.class);
        assertThat(crd.getMetadata().getName()).isEqualTo("nodegroups.deckhouse.io");
        assertThat(crd.getSpec()).isEqualTo(generated.getSpec());
        assertThat(crd.getMetadata().getAnnotations()).containsExactly(
                java.util.Map.entry("helm.sh/resource-policy", "keep"));
        assertThat(r.all(Deployment.class)).hasSize(1);
    }

    @Test
    void crdsKeepFalseLetsUninstallDeleteTheCrd() {
        CustomResourceDefinition crd = FencingChart.render("crds.install", true, "crds.keep", false)
                .one(CustomResourceDefinition.class);

        assertThat(crd.getMetadata().getAnnotations()).isNullOrEmpty();
    }

    @Test
    void tlsMountsTheSecretReadOnlyAndPassesCertificateAndKeyFlags() {
        Rendered r = FencingChart.render("tls.mode", "secret", "tls.secretName", "agent-control-tls");

        assertThat(r.args()).contains("--tls-cert=/etc/node-manager-controller/tls/tls.crt",
                "--tls-key=/etc/node-manager-controller/tls/tls.key", "--tls-ca=/etc/node-manager-controller/tls/ca.crt",
                "--agent-ca-secret=agent-control-tls").doesNotContain("--insecure-plaintext");
        PodSpec pod = r.one(Deployment.class).getSpec().getTemplate().getSpec();
        assertThat(pod.getVolumes()).filteredOn(v -> v.getName().equals("tls")).singleElement().satisfies(v -> {
            assertThat(v.getSecret().getSecretName()).isEqualTo("agent-control-tls");
            assertThat(v.getSecret().getItems()).extracting(i -> i.getKey())
                    .containsExactly("tls.crt", "tls.key", "ca.crt");
        });
        assertThat(r.controllerContainer().getVolumeMounts()).filteredOn(m -> m.getName().equals("tls"))
                .singleElement().satisfies(m -> {
                    assertThat(m.getMountPath()).isEqualTo("/etc/node-manager-controller/tls");
                    assertThat(m.getReadOnly()).isTrue();
                });
    }

    @Test
    void tlsKeysAndMountPathAreConfigurable() {
        Rendered r = FencingChart.render("tls.mode", "secret", "tls.secretName", "s", "tls.certKey", "chain.pem",
                "tls.keyKey", "key.pem", "tls.mountPath", "/tls");

        assertThat(r.arg("--tls-cert")).hasValue("/tls/chain.pem");
        assertThat(r.arg("--tls-key")).hasValue("/tls/key.pem");
    }

    @Test
    void tlsModeDisabledMountsNoSecretAndTellsTheControllerPlaintextExplicitly() {
        Rendered r = FencingChart.render("tls.mode", "disabled");

        assertThat(r.args()).noneMatch(a -> a.startsWith("--tls-")).contains("--insecure-plaintext");
        assertThat(r.one(Deployment.class).getSpec().getTemplate().getSpec().getVolumes())
                .noneMatch(v -> v.getSecret() != null);
    }

    @Test
    void replicasAreTakenFromValuesAndASingleReplicaGetsNoDisruptionBudget() {
        assertThat(FencingChart.render("controller.replicas", 3).one(Deployment.class).getSpec().getReplicas())
                .isEqualTo(3);
        Rendered single = FencingChart.render("controller.replicas", 1);
        assertThat(single.one(Deployment.class).getSpec().getReplicas()).isEqualTo(1);
        assertThat(single.all(PodDisruptionBudget.class)).isEmpty();
        assertThat(FencingChart.render("podDisruptionBudget.enabled", false).all(PodDisruptionBudget.class))
                .isEmpty();
    }

    @Test
    void imageOverridesReachTheControllerContainerAndTheAgentFlag() {
        Rendered tagged = FencingChart.render("controller.image.repository", "registry.local/nmc",
                "controller.image.tag", "v2", "controller.image.pullPolicy", "Always",
                "agent.image.repository", "registry.local/agent", "agent.image.tag", "v3");
        assertThat(tagged.controllerContainer().getImage()).isEqualTo("registry.local/nmc:v2");
        assertThat(tagged.controllerContainer().getImagePullPolicy()).isEqualTo("Always");
        assertThat(tagged.arg("--agent-image")).hasValue("registry.local/agent:v3");

        String digest = "sha256:" + "ab".repeat(32);
        Rendered pinned = FencingChart.render("controller.image.digest", digest, "agent.image.digest", digest);
        assertThat(pinned.controllerContainer().getImage())
                .isEqualTo("ghcr.io/fencing/node-manager-controller@" + digest);
        assertThat(pinned.arg("--agent-image")).hasValue("ghcr.io/fencing/fencing-agent@" + digest);
    }

    @Test
    void agentTolerationsAreTranslatedToTheControllerSyntax() {
        Rendered r = FencingChart.renderWithValues("""
                agent:
                  tolerations:
                    - key: node-role.kubernetes.io/control-plane
                      operator: Exists
                      effect: NoSchedule
                    - key: dedicated
                      operator: Equal
                      value: fencing
                      effect: NoExecute
                    - key: zone
                      value: a
                    - key: maintenance
                      operator: Exists
                """);

        assertThat(r.arg("--agent-toleration")).hasValue(
                "node-role.kubernetes.io/control-plane:NoSchedule,dedicated=fencing:NoExecute,zone=a,maintenance");
    }

    @Test
    void emptyAgentTolerationsAndResourcesLeaveTheControllerDefaults() {
        Rendered r = FencingChart.renderWithValues("""
                agent:
                  tolerations: []
                  resources: null
                """);

        assertThat(r.args()).noneMatch(a -> a.startsWith("--agent-toleration") || a.startsWith("--agent-resource"));
        assertThat(r.arg("--agent-image")).isPresent();
    }

    @Test
    void agentResourcesAndSettingsArePassedAsFlags() {
        Rendered r = FencingChart.renderWithValues("""
                agent:
                  resources:
                    requests: {memory: 100Mi, cpu: 20m}
                    limits: {memory: 200Mi, cpu: "1"}
                  priorityClassName: ""
                  gossipPort: 8500
                  controllerAddress: fencing.example.internal:443
                """);

        assertThat(r.arg("--agent-resource"))
                .hasValue("requests.cpu=20m,requests.memory=100Mi,limits.cpu=1,limits.memory=200Mi");
        assertThat(r.arg("--agent-priority-class")).hasValue("");
        assertThat(r.arg("--gossip-port")).hasValue("8500");
        assertThat(r.arg("--agent-controller-address")).hasValue("fencing.example.internal:443");
    }

    @Test
    void agentPullSettingsAndMetricsPortReachTheControllerAndItsAgentPodSettings() {
        Rendered r = FencingChart.renderWithValues("""
                agent:
                  image:
                    pullPolicy: Always
                  imagePullSecrets:
                    - name: regcred
                    - name: mirror.example
                  metricsPort: 9700
                """);

        assertThat(r.args()).filteredOn(a -> a.startsWith("--agent-image-pull") || a.startsWith("--agent-metrics"))
                .containsExactly("--agent-metrics-port=9700", "--agent-image-pull-policy=Always",
                        "--agent-image-pull-secret=regcred", "--agent-image-pull-secret=mirror.example");
        // The controller's own option parsing takes what the chart renders.
        NodeManagerOperator operator = new NodeManagerOperator();
        new CommandLine(operator).parseArgs(r.args().toArray(String[]::new));
        assertThat(operator.config().agentPod()).isEqualTo(new AgentPodSettings(9700, "Always",
                List.of("regcred", "mirror.example")));

        Rendered off = FencingChart.render("agent.metricsPort", 0);
        assertThat(off.arg("--agent-metrics-port")).hasValue("0");
        assertThat(off.arg("--agent-probe-port")).as("probes still on loopback").hasValue("9653");
        assertThat(FencingChart.render("agent.probePort", 9800).arg("--agent-probe-port")).hasValue("9800");
        assertThat(FencingChart.render("agent.image.pullPolicy", "").args())
                .noneMatch(a -> a.startsWith("--agent-image-pull-policy"));
    }

    @Test
    void logValuesBecomeTheControllerAndAgentLogFlags() {
        Rendered defaults = FencingChart.render();
        assertThat(defaults.arg("--log-level")).hasValue("info");
        assertThat(defaults.arg("--log-format")).hasValue("text");
        assertThat(defaults.args()).as("the agent's own defaults: no flag, no DaemonSet roll")
                .noneMatch(a -> a.startsWith("--agent-log-"));

        Rendered r = FencingChart.renderWithValues("""
                controller:
                  logLevel: warn,io.javaoperatorsdk=error
                  logFormat: json
                agent:
                  logLevel: info,dev.fencing.memberlist=debug
                  logFormat: json
                """);
        assertThat(r.arg("--log-level")).hasValue("warn,io.javaoperatorsdk=error");
        assertThat(r.arg("--log-format")).hasValue("json");
        assertThat(r.arg("--agent-log-level")).hasValue("info,dev.fencing.memberlist=debug");
        assertThat(r.arg("--agent-log-format")).hasValue("json");
        // The controller's own option parsing takes what the chart renders, into the agents' DaemonSet settings.
        NodeManagerOperator operator = new NodeManagerOperator();
        new CommandLine(operator).parseArgs(r.args().toArray(String[]::new));
        assertThat(operator.config().agentPod().logLevels()).containsExactly("info", "dev.fencing.memberlist=debug");
        assertThat(operator.config().agentPod().logFormat()).isEqualTo("json");
    }

    @Test
    void portsPropagateToContainerServiceAndTheAgentAddress() {
        Rendered r = FencingChart.render("controller.ports.grpc", 19650, "controller.ports.health", 18080,
                "controller.ports.probes", 18081);

        assertThat(r.arg("--grpc-port")).hasValue("19650");
        assertThat(r.arg("--health-port")).hasValue("18080");
        assertThat(r.arg("--probe-port")).hasValue("18081");
        assertThat(r.arg("--agent-controller-address")).hasValue("node-manager-controller.d8-fencing.svc:19650");
        assertThat(r.controllerContainer().getPorts()).extracting(p -> p.getContainerPort())
                .containsExactly(19650, 18080, 18081);
        // the probes' port is the kubelet's only: not in the Service
        assertThat(r.one(Service.class).getSpec().getPorts()).extracting(p -> p.getPort())
                .containsExactly(19650, 18080);
        NodeManagerOperator operator = new NodeManagerOperator();
        new CommandLine(operator).parseArgs(r.args().toArray(String[]::new));
        assertThat(operator.probePort()).isEqualTo(18081);
    }

    @Test
    void leaderElectionOffPassesTheNegatedFlagAndNoLease() {
        Rendered r = FencingChart.render("controller.leaderElection.enabled", false, "controller.replicas", 1);

        assertThat(r.args()).contains("--no-leader-election").doesNotContain("--leader-election")
                .noneMatch(a -> a.startsWith("--lease-name"));
        assertThat(FencingChart.render("controller.leaderElection.leaseName", "fencing-leader").arg("--lease-name"))
                .hasValue("fencing-leader");
    }

    @Test
    void controllerSchedulingValuesReachThePodSpec() {
        Rendered r = FencingChart.renderWithValues("""
                controller:
                  nodeSelector: {node-role.kubernetes.io/control-plane: ""}
                  tolerations:
                    - key: node-role.kubernetes.io/control-plane
                      operator: Exists
                      effect: NoSchedule
                  affinity:
                    nodeAffinity:
                      requiredDuringSchedulingIgnoredDuringExecution:
                        nodeSelectorTerms:
                          - matchExpressions:
                              - {key: kubernetes.io/os, operator: In, values: [linux]}
                  priorityClassName: ""
                  podAnnotations: {example.com/team: fencing}
                  extraArgs: ["--stream-queue=100"]
                  extraEnv:
                    - {name: EXTRA, value: "1"}
                """);

        PodSpec pod = r.one(Deployment.class).getSpec().getTemplate().getSpec();
        assertThat(pod.getNodeSelector()).containsEntry("node-role.kubernetes.io/control-plane", "");
        assertThat(pod.getTolerations()).extracting(Toleration::getKey, Toleration::getEffect)
                .containsExactly(org.assertj.core.api.Assertions.tuple("node-role.kubernetes.io/control-plane",
                        "NoSchedule"));
        assertThat(pod.getAffinity().getPodAntiAffinity()).isNull();
        assertThat(pod.getAffinity().getNodeAffinity()).isNotNull();
        assertThat(pod.getPriorityClassName()).isNull();
        assertThat(r.one(Deployment.class).getSpec().getTemplate().getMetadata().getAnnotations())
                .containsEntry("example.com/team", "fencing");
        assertThat(r.args()).endsWith("--stream-queue=100");
        Container c = r.controllerContainer();
        assertThat(c.getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("EXTRA");
            assertThat(e.getValue()).isEqualTo("1");
        });
    }

    @Test
    void existingServiceAccountAndNoRbacRenderNeither() {
        Rendered r = FencingChart.render("serviceAccount.create", false, "serviceAccount.name", "platform-sa",
                "rbac.create", false);

        assertThat(r.all(ServiceAccount.class)).extracting(sa -> sa.getMetadata().getName())
                .containsExactly("fencing-agent");
        assertThat(r.all(ClusterRole.class)).isEmpty();
        assertThat(r.all(ClusterRoleBinding.class)).isEmpty();
        assertThat(r.all(Role.class)).isEmpty();
        assertThat(r.all(RoleBinding.class)).isEmpty();
        assertThat(r.one(Deployment.class).getSpec().getTemplate().getSpec().getServiceAccountName())
                .isEqualTo("platform-sa");
    }

    @Test
    void fullnameOverrideRenamesEveryObjectButTheAgentServiceAccountAndTheAgentAddress() {
        Rendered r = FencingChart.render("fullnameOverride", "fencing-controller");

        assertThat(r.objects()).allSatisfy(o -> assertThat(o.getMetadata().getName())
                .isIn("fencing-controller", "fencing-controller-node-leases", "fencing-controller-tls",
                        "fencing-agent"));
        assertThat(r.arg("--agent-controller-address")).hasValue("fencing-controller.d8-fencing.svc:9650");
        assertThat(r.arg("--lease-name")).hasValue("fencing-controller");
        assertThat(r.one(ClusterRoleBinding.class).getSubjects().get(0).getName()).isEqualTo("fencing-controller");
    }

    @Test
    void scrapeAnnotationsPointPrometheusAtTheMetricsPort() {
        Service svc = FencingChart.render("metrics.scrapeAnnotations", true).one(Service.class);

        assertThat(svc.getMetadata().getAnnotations()).containsEntry("prometheus.io/scrape", "true")
                .containsEntry("prometheus.io/port", "8080").containsEntry("prometheus.io/path", "/metrics");
    }
}
