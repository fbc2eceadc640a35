package dev.fencing.helm;

import static org.awaitility.Awaitility.await;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.InstallCommand;
import com.marcnuri.helm.Release;
import com.marcnuri.helm.UpgradeCommand;
import dev.fencing.kubetest.RealControlPlane;
import dev.fencing.api.v1.NodeGroup;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.FieldValidateable;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * One release of the chart in a real API server, driven by Helm's own Go library (helm-java) with the control plane's
 * admin kubeconfig: {@code helm install}, {@code upgrade}, {@code uninstall}, and the objects {@code helm template}
 * renders for the same values, to compare with what the server holds.
 */
final class ChartRelease {

    /** Release name of every install. */
    static final String NAME = "fencing";
    /** The CRD the chart installs with {@code crds.install=true}. */
    static final String CRD = "nodegroups.deckhouse.io";

    private final KubernetesClient admin;
    private final Path kubeconfig;
    private final String namespace;

    ChartRelease(RealControlPlane kube, String namespace) {
        this.admin = kube.adminClient();
        this.kubeconfig = kube.adminKubeconfig();
        this.namespace = namespace;
    }

    String namespace() {
        return namespace;
    }

    /** {@code helm install --create-namespace} with {@code --set key=value} pairs; throws with Helm's message. */
    Release install(Object... keyValues) {
        InstallCommand command = new Helm(FencingChart.dir()).install().withName(NAME).withNamespace(namespace)
                .createNamespace().withKubeConfig(kubeconfig);
        set(command::set, keyValues);
        return command.call();
    }

    /** {@code helm upgrade} with {@code --set key=value} pairs (values not given fall back to the chart's). */
    Release upgrade(Object... keyValues) {
        UpgradeCommand command = new Helm(FencingChart.dir()).upgrade().withName(NAME).withNamespace(namespace)
                .withKubeConfig(kubeconfig);
        set(command::set, keyValues);
        return command.call();
    }

    /** {@code helm uninstall}. */
    String uninstall() {
        return Helm.uninstall(NAME).withNamespace(namespace).withKubeConfig(kubeconfig).call();
    }

    /** What {@code helm template} renders for this release's namespace and these values. */
    List<HasMetadata> rendered(Object... keyValues) {
        return FencingChart.parse(FencingChart.templateIn(namespace, null, keyValues));
    }

    /**
     * Creates the release namespace and asks the server to create every object in a dry run with
     * {@code fieldValidation=Strict}, so an unknown, misplaced or duplicated field fails instead of being dropped
     * with a warning; returns the refusals as {@code Kind/name: message}.
     */
    List<String> strictDryRunRefusals(List<HasMetadata> objects) {
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata()
                .build()).create();
        List<String> refusals = new ArrayList<>();
        for (HasMetadata o : objects) {
            try {
                admin.resource(o).dryRun().fieldValidation(FieldValidateable.Validation.STRICT).create();
            } catch (KubernetesClientException e) {
                refusals.add(o.getKind() + "/" + o.getMetadata().getName() + ": " + e.getMessage());
            }
        }
        return refusals;
    }

    /** The server's copy of {@code object} (same kind, namespace and name), or null. */
    HasMetadata onServer(HasMetadata object) {
        return admin.resource(object).get();
    }

    /**
     * Waits until the NodeGroup CRD is Established and its watch cache answers. Until the cache is ready the API
     * server's CRD finalizer fails with "storage is (re)initializing" and backs off (tens of seconds), so a CRD
     * deleted right after its creation would linger.
     */
    static CustomResourceDefinition awaitCrdEstablished(KubernetesClient admin) {
        CustomResourceDefinition established = await().atMost(Duration.ofSeconds(20)).until(() -> admin
                .apiextensions().v1().customResourceDefinitions().withName(CRD).get(), crd -> crd != null
                && crd.getStatus() != null && crd.getStatus().getConditions().stream()
                        .anyMatch(c -> c.getType().equals("Established") && c.getStatus().equals("True")));
        // resourceVersion=0: served from the watch cache, refused while it initialises
        await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> admin.resources(NodeGroup.class)
                .list(new ListOptionsBuilder().withResourceVersion("0").build()) != null);
        return established;
    }

    /**
     * Waits until the API server's admission resolves the NodeGroup kind in an ownerReference that blocks owner
     * deletion (as the controller's DaemonSets and Secrets carry). The admission plugin resolves the owner's kind
     * through a discovery cache that the API server resets only every 30 s: when the cache was filled while the CRD
     * was absent (a test before deleted it), a re-created CRD stays unknown to it until the next reset, and such
     * objects are refused with "cannot find RESTMapping". A long-lived cluster does not see that; tests that
     * re-create the CRD do. The probe is a dry-run ConfigMap created by a user who may create and delete ConfigMaps
     * in {@code default} and nothing else (superusers skip the check): once the kind resolves, the refusal names the
     * missing finalizers permission instead.
     */
    static void awaitOwnerReferencesAdmitted(RealControlPlane kube) {
        KubernetesClient admin = kube.adminClient();
        String user = "nodegroup-owner-probe";
        admin.rbac().roles().inNamespace("default").resource(new RoleBuilder().withNewMetadata().withName(user)
                .endMetadata().addNewRule().withApiGroups("").withResources("configmaps")
                .withVerbs("create", "delete").endRule().build()).createOr(NonDeletingOperation::update);
        admin.rbac().roleBindings().inNamespace("default").resource(new RoleBindingBuilder().withNewMetadata()
                .withName(user).endMetadata().withNewRoleRef("rbac.authorization.k8s.io", "Role", user)
                .addNewSubject().withKind("User").withName(user).withApiGroup("rbac.authorization.k8s.io")
                .endSubject().build()).createOr(NonDeletingOperation::update);
        ConfigMap probe = new ConfigMapBuilder().withNewMetadata().withName(user).withNamespace("default")
                .addNewOwnerReference().withApiVersion("deckhouse.io/v1").withKind("NodeGroup").withName("probe")
                .withUid("00000000-0000-0000-0000-000000000000").withBlockOwnerDeletion(true).endOwnerReference()
                .endMetadata().build();
        try (KubernetesClient client = kube.clientAs(user)) {
            await().atMost(Duration.ofSeconds(45)).until(() -> {
                try {
                    client.resource(probe).dryRun().create();
                    return false;
                } catch (KubernetesClientException e) {
                    return String.valueOf(e.getMessage()).contains("can't set finalizers on");
                }
            });
        }
    }

    /** Deletes the NodeGroup CRD if present and waits until it is gone, so a later install can own it. */
    static void deleteCrd(KubernetesClient admin) {
        admin.apiextensions().v1().customResourceDefinitions().withName(CRD).delete();
        await().atMost(Duration.ofSeconds(30)).until(() -> admin.apiextensions().v1().customResourceDefinitions()
                .withName(CRD).get() == null);
    }

    private static void set(BiConsumer<String, Object> setter, Object... keyValues) {
        if (keyValues.length % 2 != 0) {
            throw new IllegalArgumentException("key/value pairs expected");
        }
        for (int i = 0; i < keyValues.length; i += 2) {
            setter.accept(String.valueOf(keyValues[i]), keyValues[i + 1]);
        }
    }
}
