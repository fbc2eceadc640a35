package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class DefaultValuesRenderTest {

    static final String NAME = "node-manager-controller";
    static final String NODE_LEASES = NAME + "-node-leases";
    static final Map<String, String> SELECTOR = Map.of(
            "app.kubernetes.io/name", NAME,
            "app.kubernetes.io/instance", "fencing",
            "app.kubernetes.io/component", "controller");

    static Rendered rendered;

    @BeforeAll
    static void render() {
        rendered = FencingChart.render();
    }

    @Test
    void rendersTheControllerItsServiceAccessAndDisruptionBudgetButNoCrdOrAgentDaemonSet() {
        assertThat(rendered.describe()).containsExactlyInAnyOrder(
                "Deployment/" + NAME, "Service/" + NAME, "ServiceAccount/" + NAME, "ClusterRole/" + NAME,
                "ClusterRoleBinding/" + NAME, "Role/" + NAME, "RoleBinding/" + NAME, "PodDisruptionBudget/" + NAME,
                "Role/" + NODE_LEASES, "RoleBinding/" + NODE_LEASES, "ServiceAccount/fencing-agent",
                "Secret/" + NAME + "-tls");
        assertThat(rendered.all(CustomResourceDefinition.class)).isEmpty();
        assertThat(rendered.all(DaemonSet.class)).isEmpty();
    }

    @Test
    void everyObjectCarriesTheChartLabelsAndNamespacedOnesLiveInTheReleaseNamespace() {
        for (HasMetadata o : rendered.objects()) {
            assertThat(o.getMetadata().getLabels()).as(o.getKind()).containsAllEntriesOf(SELECTOR)
                    .containsEntry("app.kubernetes.io/part-of", "fencing")
                    .containsEntry("app.kubernetes.io/managed-by", "Helm")
                    .containsEntry("app.kubernetes.io/version", "0.1.0")
                    .containsEntry("helm.sh/chart", "fencing-0.1.0");
            boolean clusterScoped = o instanceof ClusterRole || o instanceof ClusterRoleBinding;
            boolean nodeLeases = NODE_LEASES.equals(o.getMetadata().getName());
            assertThat(o.getMetadata().getNamespace()).as(o.getKind())
                    .isEqualTo(clusterScoped ? null : nodeLeases ? "kube-node-lease" : FencingChart.NAMESPACE);
        }
    }

    @Test
    void deploymentRunsTwoReplicasSpreadOverNodesWithTheServiceAccount() {
        Deployment d = rendered.one(Deployment.class);

        assertThat(d.getSpec().getReplicas()).isEqualTo(2);
        assertThat(d.getSpec().getSelector().getMatchLabels()).isEqualTo(SELECTOR);
        assertThat(d.getSpec().getTemplate().getMetadata().getLabels()).containsAllEntriesOf(SELECTOR);
        PodSpec pod = d.getSpec().getTemplate().getSpec();
        assertThat(pod.getServiceAccountName()).isEqualTo(NAME);
        assertThat(pod.getAutomountServiceAccountToken()).isTrue();
        assertThat(pod.getPriorityClassName()).isEqualTo("system-cluster-critical");
        var preferred = pod.getAffinity().getPodAntiAffinity().getPreferredDuringSchedulingIgnoredDuringExecution();
        assertThat(preferred).singleElement().satisfies(term -> {
            assertThat(term.getPodAffinityTerm().getTopologyKey()).isEqualTo("kubernetes.io/hostname");
            assertThat(term.getPodAffinityTerm().getLabelSelector().getMatchLabels()).isEqualTo(SELECTOR);
        });
    }

    @Test
    void controllerArgumentsConfigureLeaderElectionPortsAndTheAgents() {
        assertThat(rendered.args()).containsExactly(
                "--namespace=d8-fencing",
                "--grpc-port=9650",
                "--health-port=8080",
                "--probe-port=8081",
                "--leader-election",
                "--lease-name=node-manager-controller",
                "--status-interval=10s",
                "--report-stale-after=30s",
                "--max-tie-lease=30s",
                "--storm-min-healthy=50%",
                "--storm-max-concurrent=2",
                "--history-limit=4096",
                "--stream-queue=4096",
                "--log-level=info",
                "--log-format=text",
                "--gossip-port=9651",
                "--agent-metrics-port=9652",
                "--agent-probe-port=9653",
                "--agent-image=ghcr.io/fencing/fencing-agent:0.1.0",
                "--agent-image-pull-policy=IfNotPresent",
                "--agent-controller-address=node-manager-controller.d8-fencing.svc:9650",
                "--agent-resource=requests.cpu=10m,requests.memory=96Mi,limits.memory=192Mi",
                "--agent-toleration=Exists",
                "--agent-priority-class=system-node-critical",
                "--agent-service-account=fencing-agent",
                "--tls-cert=/etc/node-manager-controller/tls/tls.crt",
                "--tls-key=/etc/node-manager-controller/tls/tls.key",
                "--tls-ca=/etc/node-manager-controller/tls/ca.crt",
                "--agent-ca-secret=node-manager-controller-tls");
        Container c = rendered.controllerContainer();
        assertThat(c.getImage()).isEqualTo("ghcr.io/fencing/node-manager-controller:0.1.0");
        assertThat(c.getEnv()).extracting(EnvVar::getName)
                .containsExactly("POD_NAMESPACE", "POD_NAME", "JAVA_TOOL_OPTIONS");
        assertThat(c.getEnv().get(0).getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.namespace");
    }

    @Test
    void agentsDialTheServiceGrpcPort() {
        Service svc = rendered.one(Service.class);
        String address = rendered.arg("--agent-controller-address").orElseThrow();
        int grpcPort = svc.getSpec().getPorts().stream().filter(p -> p.getName().equals("grpc")).findFirst()
                .orElseThrow().getPort();

        assertThat(address).isEqualTo(svc.getMetadata().getName() + "." + svc.getMetadata().getNamespace()
                + ".svc:" + grpcPort);
    }

    @Test
    void probesCheckHealthzAndReadyzOnTheProbePort() {
        Container c = rendered.controllerContainer();

        // the probes' own port (every connection bounded), not the metrics port any pod can hold the threads of
        assertThat(c.getPorts()).extracting(ContainerPort::getName, ContainerPort::getContainerPort,
                ContainerPort::getProtocol).containsExactly(tuple("grpc", 9650, "TCP"), tuple("http", 8080, "TCP"),
                tuple("probes", 8081, "TCP"));
        assertHttpProbe(c.getStartupProbe(), "/healthz");
        assertHttpProbe(c.getLivenessProbe(), "/healthz");
        assertHttpProbe(c.getReadinessProbe(), "/readyz");
        assertThat(c.getStartupProbe().getFailureThreshold() * c.getStartupProbe().getPeriodSeconds())
                .as("seconds a starting JVM gets before liveness counts").isGreaterThanOrEqualTo(60);
    }

    private static void assertHttpProbe(Probe probe, String path) {
        assertThat(probe.getHttpGet().getPath()).isEqualTo(path);
        assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo("probes");
    }

    @Test
    void controllerRunsNonRootOnAReadOnlyRootFilesystemWithAWritableTmp() {
        PodSpec pod = rendered.one(Deployment.class).getSpec().getTemplate().getSpec();
        Container c = rendered.controllerContainer();

        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(pod.getSecurityContext().getRunAsUser()).isEqualTo(65532L);
        assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
        assertThat(c.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(c.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(c.getSecurityContext().getPrivileged()).isNull();
        assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
        // The only writable mount is /tmp; the other one is the TLS Secret, read-only.
        assertThat(c.getVolumeMounts()).extracting(m -> m.getName(), m -> m.getMountPath(), m -> m.getReadOnly())
                .containsExactly(tuple("tmp", "/tmp", null), tuple("tls", "/etc/node-manager-controller/tls", true));
        assertThat(pod.getVolumes()).filteredOn(v -> v.getName().equals("tmp")).singleElement()
                .satisfies(v -> assertThat(v.getEmptyDir()).isNotNull());
    }

    @Test
    void controllerHasMemoryLimitAndRequests() {
        var resources = rendered.controllerContainer().getResources();

        assertThat(resources.getRequests()).containsEntry("cpu", new Quantity("50m"))
                .containsEntry("memory", new Quantity("256Mi"));
        assertThat(resources.getLimits()).containsOnlyKeys("memory").containsEntry("memory", new Quantity("512Mi"));
    }

    @Test
    void serviceExposesAgentControlAndMetricsOfTheControllerPods() {
        Service svc = rendered.one(Service.class);

        assertThat(svc.getSpec().getType()).isEqualTo("ClusterIP");
        assertThat(svc.getSpec().getSelector()).isEqualTo(SELECTOR);
        assertThat(svc.getSpec().getPorts()).extracting(p -> p.getName(), p -> p.getPort(),
                p -> p.getTargetPort().getStrVal(), p -> p.getAppProtocol())
                .containsExactly(tuple("grpc", 9650, "grpc", "grpc"), tuple("metrics", 8080, "http", "http"));
        assertThat(svc.getMetadata().getAnnotations()).isNullOrEmpty();
    }

    @Test
    void clusterRoleGrantsExactlyWhatTheControllerCallsClusterWide() {
        assertThat(rendered.one(ClusterRole.class).getRules()).extracting(PolicyRule::getApiGroups,
                PolicyRule::getResources, PolicyRule::getVerbs).containsExactly(
                tuple(List.of("deckhouse.io"), List.of("nodegroups"), List.of("get", "list", "watch")),
                tuple(List.of("apiextensions.k8s.io"), List.of("customresourcedefinitions"), List.of("get")),
                tuple(List.of("deckhouse.io"), List.of("nodegroups/status"), List.of("update", "patch")),
                // not a call: OwnerReferencesPermissionEnforcement checks it when an owned object sets
                // blockOwnerDeletion on its NodeGroup owner reference
                tuple(List.of("deckhouse.io"), List.of("nodegroups/finalizers"), List.of("update")),
                tuple(List.of(""), List.of("nodes"), List.of("get", "list", "watch", "patch", "delete")),
                tuple(List.of(""), List.of("nodes/status"), List.of("patch")),
                tuple(List.of(""), List.of("events"), List.of("create", "patch")),
                tuple(List.of("authentication.k8s.io"), List.of("tokenreviews"), List.of("create")));
        // Only the NodeGroup CRD's schema, read once at start (--nodegroup-status=auto).
        assertThat(rendered.one(ClusterRole.class).getRules()).allSatisfy(r -> {
            if (r.getResources().equals(List.of("customresourcedefinitions"))) {
                assertThat(r.getResourceNames()).containsExactly("nodegroups.deckhouse.io");
            } else {
                assertThat(r.getResourceNames()).isNullOrEmpty();
            }
            assertThat(r.getNonResourceURLs()).isNullOrEmpty();
        });
    }

    @Test
    void roleGrantsDaemonSetsTheLeaseKeyringSecretsStatusConfigMapsAndPodReadsOnlyInTheReleaseNamespace() {
        Role role = rendered.named(Role.class, NAME);

        assertThat(role.getMetadata().getNamespace()).isEqualTo(FencingChart.NAMESPACE);
        assertThat(role.getRules()).extracting(PolicyRule::getApiGroups, PolicyRule::getResources,
                PolicyRule::getVerbs).containsExactly(
                tuple(List.of("apps"), List.of("daemonsets"),
                        List.of("get", "list", "watch", "create", "update", "patch", "delete")),
                tuple(List.of("coordination.k8s.io"), List.of("leases"),
                        List.of("get", "list", "watch", "create", "update", "patch")),
                tuple(List.of(""), List.of("secrets"), List.of("get", "list", "watch", "create", "update")),
                tuple(List.of(""), List.of("configmaps"),
                        List.of("get", "list", "watch", "create", "update", "patch", "delete")),
                tuple(List.of(""), List.of("pods"), List.of("get")));
    }

    @Test
    void kubeletHeartbeatLeasesAreReadableOnlyInKubeNodeLease() {
        Role role = rendered.named(Role.class, NODE_LEASES);
        RoleBinding rb = rendered.named(RoleBinding.class, NODE_LEASES);

        assertThat(role.getMetadata().getNamespace()).isEqualTo("kube-node-lease");
        assertThat(role.getRules()).extracting(PolicyRule::getApiGroups, PolicyRule::getResources,
                PolicyRule::getVerbs).containsExactly(
                tuple(List.of("coordination.k8s.io"), List.of("leases"), List.of("get", "list", "watch")));
        assertThat(rb.getMetadata().getNamespace()).isEqualTo("kube-node-lease");
        assertThat(rb.getRoleRef().getName()).isEqualTo(NODE_LEASES);
        assertThat(rb.getSubjects()).extracting(Subject::getName, Subject::getNamespace)
                .containsExactly(tuple(NAME, FencingChart.NAMESPACE));
    }

    @Test
    void bindingsGiveBothRolesToTheControllerServiceAccount() {
        ServiceAccount sa = rendered.named(ServiceAccount.class, NAME);
        ClusterRoleBinding crb = rendered.one(ClusterRoleBinding.class);
        RoleBinding rb = rendered.named(RoleBinding.class, NAME);

        assertThat(crb.getRoleRef().getKind()).isEqualTo("ClusterRole");
        assertThat(crb.getRoleRef().getName()).isEqualTo(rendered.one(ClusterRole.class).getMetadata().getName());
        assertThat(rb.getRoleRef().getKind()).isEqualTo("Role");
        assertThat(rb.getRoleRef().getName()).isEqualTo(NAME);
        for (List<Subject> subjects : List.of(crb.getSubjects(), rb.getSubjects())) {
            assertThat(subjects).extracting(Subject::getKind, Subject::getName, Subject::getNamespace)
                    .containsExactly(tuple("ServiceAccount", sa.getMetadata().getName(), FencingChart.NAMESPACE));
        }
    }

    @Test
    void disruptionBudgetKeepsOneControllerReplica() {
        PodDisruptionBudget pdb = rendered.one(PodDisruptionBudget.class);

        assertThat(pdb.getSpec().getMinAvailable().getIntVal()).isEqualTo(1);
        assertThat(pdb.getSpec().getSelector().getMatchLabels()).isEqualTo(SELECTOR);
    }
}
