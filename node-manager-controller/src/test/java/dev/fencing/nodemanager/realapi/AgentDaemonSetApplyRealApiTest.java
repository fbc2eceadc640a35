package dev.fencing.nodemanager.realapi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.api.v1.Fencing;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.api.v1.NodeGroupSpec;
import dev.fencing.api.v1.NodeType;
import dev.fencing.kubetest.RealControlPlaneExtension;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.dependent.AgentDaemonSetFactory;
import dev.fencing.nodemanager.dependent.AgentDaemonSets;
import dev.fencing.nodemanager.dependent.AgentDaemonSets.Outcome;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The evidence for writing agent DaemonSets with server-side apply (ARCHITECTURE §6, item 5 of issue 11): what a
 * real kube-apiserver does with each write mode of {@link AgentDaemonSets} when the desired state holds, when it
 * changes, when another manager ({@code kubectl edit}) changes a field the controller sets, and when another
 * applier wants one of the controller's fields.
 */
class AgentDaemonSetApplyRealApiTest {

    @RegisterExtension
    static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.apiServerOnly();

    private static final String EDITED_IMAGE = "registry.example/someone-elses-agent:1";
    private static final String NOTE = "example.com/note";

    private static KubernetesClient admin;

    @BeforeAll
    static void installCrd() {
        admin = KUBE.get().adminClient();
        RealApiNodeGroups.installCrd(admin);
    }

    private record Setup(String namespace, NodeGroup group, ControllerConfig config, AgentDaemonSets daemonSets) {
        DaemonSet get() {
            return admin.apps().daemonSets().inNamespace(namespace).withName(AgentDaemonSetFactory.name(
                    group.getMetadata().getName())).get();
        }

        String image() {
            return get().getSpec().getTemplate().getSpec().getContainers().get(0).getImage();
        }
    }

    private static Setup setup(boolean serverSideApply) {
        String ns = RealApiNodeGroups.namespace(admin, KUBE.get().uniqueName("ds"));
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName(KUBE.get().uniqueName("g")).build());
        g.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(new Fencing()));
        NodeGroup created = admin.resource(g).create();
        ControllerConfig config = ControllerConfig.forTests(ns).withServerSideApply(serverSideApply);
        return new Setup(ns, created, config, new AgentDaemonSets(admin, config));
    }

    /** As kubectl edit does: a JSON patch under its own field manager. */
    private static void kubectlEdit(Setup s) {
        admin.apps().daemonSets().inNamespace(s.namespace()).withName(s.get().getMetadata().getName()).patch(
                new PatchContext.Builder().withPatchType(PatchType.JSON).withFieldManager("kubectl-edit").build(),
                "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/image\",\"value\":\""
                        + EDITED_IMAGE + "\"},{\"op\":\"add\",\"path\":\"/metadata/annotations/"
                        + NOTE.replace("/", "~1") + "\",\"value\":\"kept\"}]");
    }

    @ParameterizedTest(name = "serverSideApply={0}")
    @ValueSource(booleans = {true, false})
    void anUnchangedDesiredStateWritesNothingDespiteServerDefaults(boolean serverSideApply) {
        Setup s = setup(serverSideApply);
        assertThat(s.daemonSets().apply(s.group()).outcome()).isEqualTo(Outcome.CREATED);
        DaemonSet created = s.get();
        // The server filled in what the controller leaves out, e.g. the template's restartPolicy.
        assertThat(created.getSpec().getTemplate().getSpec().getRestartPolicy()).isEqualTo("Always");
        assertThat(s.daemonSets().apply(s.group()).outcome()).isEqualTo(Outcome.UNCHANGED);
        assertThat(s.daemonSets().apply(s.group()).outcome()).isEqualTo(Outcome.UNCHANGED);
        assertThat(s.get().getMetadata().getResourceVersion()).isEqualTo(created.getMetadata().getResourceVersion());
        assertThat(created.getMetadata().getManagedFields()).anySatisfy(m -> {
            assertThat(m.getOperation()).isEqualTo(serverSideApply ? "Apply" : "Update");
            if (serverSideApply) {
                assertThat(m.getManager()).isEqualTo(AgentDaemonSets.FIELD_MANAGER);
            }
        });
    }

    @ParameterizedTest(name = "serverSideApply={0}")
    @ValueSource(booleans = {true, false})
    void aChangedDesiredStateIsWrittenAndDroppedFieldsGoAway(boolean serverSideApply) {
        Setup s = setup(serverSideApply);
        s.daemonSets().apply(s.group());
        assertThat(s.get().getSpec().getTemplate().getSpec().getPriorityClassName())
                .isEqualTo("system-node-critical");
        ControllerConfig c = s.config();
        ControllerConfig noPriority = new ControllerConfig(c.namespace(), c.grpcPort(), c.healthPort(),
                c.gossipPort(), "registry.example/fencing-agent:next", c.agentControllerAddress(),
                c.agentResources(), c.agentTolerations(), "", c.leaderElection(), c.leaseName(), null, null,
                c.statusInterval(), c.reportStaleAfter(), c.historyLimit(), c.streamQueue(), c.maxTieLease(),
                c.maxOutOfService(), c.gossipEncryption(), c.advertiseHost()).withServerSideApply(serverSideApply);
        assertThat(new AgentDaemonSets(admin, noPriority).apply(s.group()).outcome()).isEqualTo(Outcome.UPDATED);
        assertThat(s.image()).isEqualTo("registry.example/fencing-agent:next");
        assertThat(s.get().getSpec().getTemplate().getSpec().getPriorityClassName()).isNull();
    }

    /** Why SSA: the controller's fields come back after a hand edit, and fields it does not set stay. */
    @Test
    void serverSideApplyRevertsAHandEditOfItsFieldsAndKeepsOthers() {
        Setup s = setup(true);
        s.daemonSets().apply(s.group());
        kubectlEdit(s);
        assertThat(s.image()).isEqualTo(EDITED_IMAGE);

        assertThat(s.daemonSets().apply(s.group()).outcome()).isEqualTo(Outcome.UPDATED);
        assertThat(s.image()).isEqualTo(s.config().agentImage());
        assertThat(s.get().getMetadata().getAnnotations()).containsEntry(NOTE, "kept")
                .containsKey(AgentDaemonSetFactory.HASH_ANNOTATION);
        assertThat(s.daemonSets().apply(s.group()).outcome()).isEqualTo(Outcome.UNCHANGED);
    }

    /** What the write without SSA does: the hash still matches, so a hand edit stays until the spec changes. */
    @Test
    void updateOnHashLeavesAHandEditInPlace() {
        Setup s = setup(false);
        s.daemonSets().apply(s.group());
        kubectlEdit(s);

        assertThat(s.daemonSets().apply(s.group()).outcome()).isEqualTo(Outcome.UNCHANGED);
        assertThat(s.image()).isEqualTo(EDITED_IMAGE);
        assertThat(s.get().getMetadata().getAnnotations()).containsEntry(NOTE, "kept");
    }

    /** The server records who owns what: another applier must force to take the controller's image. */
    @Test
    void anotherApplierConflictsOnTheControllersFieldsOnly() {
        Setup s = setup(true);
        s.daemonSets().apply(s.group());
        String name = s.get().getMetadata().getName();
        DaemonSet theirs = new DaemonSetBuilder().withNewMetadata().withName(name).withNamespace(s.namespace())
                .endMetadata().withNewSpec().withNewTemplate().withNewSpec().addNewContainer().withName("agent")
                .withImage(EDITED_IMAGE).endContainer().endSpec().endTemplate().endSpec().build();
        assertThatThrownBy(() -> admin.apps().daemonSets().inNamespace(s.namespace()).resource(theirs)
                .fieldManager("other-tool").serverSideApply())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(409);
                    assertThat(e.getMessage()).contains("conflict with \"" + AgentDaemonSets.FIELD_MANAGER + "\"")
                            .contains(".spec.template.spec.containers[name=\"agent\"].image");
                });

        DaemonSet note = new DaemonSetBuilder().withNewMetadata().withName(name).withNamespace(s.namespace())
                .addToAnnotations(NOTE, "theirs").endMetadata().build();
        admin.apps().daemonSets().inNamespace(s.namespace()).resource(note).fieldManager("other-tool")
                .serverSideApply();
        assertThat(s.daemonSets().apply(s.group()).outcome()).isEqualTo(Outcome.UNCHANGED);
        assertThat(s.get().getMetadata().getAnnotations()).containsEntry(NOTE, "theirs");
    }

    /**
     * Coexistence (Deckhouse's own agent): a DaemonSet of the group's name that the NodeGroup does not control is
     * left exactly as it is by both write modes (a forced apply would otherwise take its fields over), survives the
     * switch-off, and the group gets its own DaemonSet once it is gone.
     */
    @ParameterizedTest(name = "serverSideApply={0}")
    @ValueSource(booleans = {true, false})
    void aForeignDaemonSetOfTheGroupsNameIsNeitherTakenOverNorDeleted(boolean serverSideApply) {
        Setup s = setup(serverSideApply);
        String name = AgentDaemonSetFactory.name(s.group().getMetadata().getName());
        DaemonSet foreign = admin.apps().daemonSets().inNamespace(s.namespace()).resource(new DaemonSetBuilder()
                .withNewMetadata().withName(name).withNamespace(s.namespace()).addToLabels("heritage", "deckhouse")
                .endMetadata()
                .withNewSpec().withNewSelector().addToMatchLabels("app", "deckhouse-agent").endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", "deckhouse-agent").endMetadata()
                .withNewSpec().addNewContainer().withName("agent").withImage(EDITED_IMAGE).endContainer().endSpec()
                .endTemplate().endSpec().build()).create();

        AgentDaemonSets.Applied applied = s.daemonSets().apply(s.group());
        assertThat(applied.outcome()).isEqualTo(Outcome.NOT_OWNED);
        assertThat(applied.owner()).contains("heritage=deckhouse");
        assertThat(s.daemonSets().delete(s.group().getMetadata().getName(), s.group().getMetadata().getUid()))
                .isFalse();
        DaemonSet after = s.get();
        assertThat(after.getMetadata().getResourceVersion()).isEqualTo(foreign.getMetadata().getResourceVersion());
        assertThat(after.getMetadata().getManagedFields()).extracting(m -> m.getManager())
                .doesNotContain(AgentDaemonSets.FIELD_MANAGER);

        admin.apps().daemonSets().inNamespace(s.namespace()).withName(name).delete();
        await().atMost(Duration.ofSeconds(20)).until(() -> s.get() == null);
        assertThat(s.daemonSets().apply(s.group()).outcome()).isEqualTo(Outcome.CREATED);
        assertThat(s.get().getMetadata().getOwnerReferences()).singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo(s.group().getMetadata().getUid()));
    }

    /**
     * With the informer a reconcile sends nothing while nothing changed on either side, whatever the write mode; a
     * hand edit changes the resourceVersion, so the next apply reads and writes again (and with server-side apply
     * reverts the edit); a changed desired state is written although the cached copy did not move.
     */
    @ParameterizedTest(name = "serverSideApply={0}")
    @ValueSource(booleans = {true, false})
    void withTheInformerAnUnchangedDaemonSetCostsNoRequestAndAnyChangeIsSeen(boolean serverSideApply) {
        Setup s = setup(serverSideApply);
        List<String> requests = new CopyOnWriteArrayList<>();
        try (KubernetesClient counted = new KubernetesClientBuilder().withConfig(admin.getConfiguration())
                .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("count", new Interceptor() {
                    @Override
                    public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
                        requests.add(request.method() + " " + request.uri().getPath());
                    }
                })).build();
             SharedIndexInformer<DaemonSet> informer = admin.apps().daemonSets().inNamespace(s.namespace())
                     .withLabel(AgentDaemonSetFactory.APP_LABEL, AgentDaemonSetFactory.APP).inform()) {
            AgentDaemonSets daemonSets = new AgentDaemonSets(counted, s.config(), name -> Optional.ofNullable(
                    informer.getStore().getByKey(s.namespace() + "/" + name)));
            assertThat(daemonSets.apply(s.group()).outcome()).isEqualTo(Outcome.CREATED);
            String written = s.get().getMetadata().getResourceVersion();
            await().atMost(Duration.ofSeconds(10)).until(() -> written.equals(cachedVersion(informer, s)));
            requests.clear();
            for (int i = 0; i < 5; i++) {
                assertThat(daemonSets.apply(s.group()).outcome()).isEqualTo(Outcome.UNCHANGED);
            }
            assertThat(requests).as("five reconciles of an unchanged DaemonSet").isEmpty();

            kubectlEdit(s);
            String edited = s.get().getMetadata().getResourceVersion();
            await().atMost(Duration.ofSeconds(10)).until(() -> edited.equals(cachedVersion(informer, s)));
            Outcome afterEdit = daemonSets.apply(s.group()).outcome();
            assertThat(requests).as("the edit is read").anyMatch(r -> r.startsWith("GET ")
                    && r.endsWith("/daemonsets/" + s.get().getMetadata().getName()));
            if (serverSideApply) {
                assertThat(afterEdit).isEqualTo(Outcome.UPDATED);
                assertThat(s.image()).isEqualTo(s.config().agentImage());
            } else {
                assertThat(afterEdit).isEqualTo(Outcome.UNCHANGED);
            }
            String settled = s.get().getMetadata().getResourceVersion();
            await().atMost(Duration.ofSeconds(10)).until(() -> settled.equals(cachedVersion(informer, s)));
            requests.clear();
            assertThat(daemonSets.apply(s.group()).outcome()).isEqualTo(Outcome.UNCHANGED);
            assertThat(requests).as("settled again").isEmpty();

            // The desired state changes (a new agent image) while the cached copy stays where it was.
            ControllerConfig c = s.config();
            ControllerConfig next = new ControllerConfig(c.namespace(), c.grpcPort(), c.healthPort(),
                    c.gossipPort(), "registry.example/fencing-agent:next", c.agentControllerAddress(),
                    c.agentResources(), c.agentTolerations(), c.agentPriorityClass(), c.leaderElection(),
                    c.leaseName(), null, null, c.statusInterval(), c.reportStaleAfter(), c.historyLimit(),
                    c.streamQueue(), c.maxTieLease(), c.maxOutOfService(), c.gossipEncryption(), c.advertiseHost())
                    .withServerSideApply(serverSideApply);
            NodeGroup group = s.group();
            AgentDaemonSets nextController = new AgentDaemonSets(counted, next, name -> Optional.ofNullable(
                    informer.getStore().getByKey(s.namespace() + "/" + name)));
            assertThat(nextController.apply(group).outcome()).as("a new controller has seen nothing yet")
                    .isEqualTo(Outcome.UPDATED);
            assertThat(s.image()).isEqualTo("registry.example/fencing-agent:next");
        }
    }

    private static String cachedVersion(SharedIndexInformer<DaemonSet> informer, Setup s) {
        DaemonSet cached = informer.getStore().getByKey(s.namespace() + "/"
                + AgentDaemonSetFactory.name(s.group().getMetadata().getName()));
        return cached == null ? null : cached.getMetadata().getResourceVersion();
    }

    /** The production pod spec passes the API server's validation: init container, probes, volumes, pull secrets. */
    @Test
    void theProductionPodSpecIsAcceptedWithEveryOptionalPart() {
        Setup s = setup(true);
        ControllerConfig full = s.config().withAgentPod(new dev.fencing.nodemanager.config.AgentPodSettings(9652,
                "IfNotPresent", java.util.List.of("regcred")));
        assertThat(new AgentDaemonSets(admin, full).apply(s.group()).outcome()).isEqualTo(Outcome.CREATED);
        var pod = s.get().getSpec().getTemplate().getSpec();
        assertThat(pod.getInitContainers()).extracting(c -> c.getName()).containsExactly("socket-link");
        assertThat(pod.getContainers().get(0).getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
        assertThat(pod.getImagePullSecrets()).extracting(r -> r.getName()).containsExactly("regcred");
        assertThat(new AgentDaemonSets(admin, full).apply(s.group()).outcome()).as("server defaults cause no write")
                .isEqualTo(Outcome.UNCHANGED);
    }
}
