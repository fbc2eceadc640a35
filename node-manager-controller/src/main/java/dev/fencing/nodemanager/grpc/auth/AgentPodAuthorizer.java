package dev.fencing.nodemanager.grpc.auth;

import dev.fencing.nodemanager.dependent.AgentDaemonSetFactory;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.Status;
import java.util.Map;
import java.util.Objects;

/**
 * The hello check: an authenticated caller may speak for node N of group G only if its token's pod is a pod of G's
 * agent DaemonSet ({@code fencing-agent-<G>}, created by this controller in its namespace), that pod still exists
 * with the token's UID, and it is scheduled on N ({@code spec.nodeName}, and the token's node claim when present).
 * One Pod GET and one DaemonSet GET per hello.
 */
public final class AgentPodAuthorizer {

    private final KubernetesClient client;
    private final String namespace;

    /** @param namespace where this controller creates the agent DaemonSets */
    public AgentPodAuthorizer(KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
    }

    /**
     * Passes when {@code identity} may say hello as {@code node} of {@code group}.
     *
     * @throws AgentAuthException PERMISSION_DENIED with the reason, or UNAVAILABLE when the API cannot be read
     */
    public void authorize(AgentIdentity identity, String node, String group) throws AgentAuthException {
        if (!namespace.equals(identity.namespace())) {
            throw denied("token's pod " + identity.namespace() + "/" + identity.podName() + " is not in the agent "
                    + "namespace " + namespace);
        }
        if (!identity.nodeName().isEmpty() && !identity.nodeName().equals(node)) {
            throw denied("token was issued to a pod on node " + identity.nodeName() + ", not on " + node);
        }
        String daemonSet = AgentDaemonSetFactory.name(group);
        Pod pod;
        DaemonSet owner;
        try {
            pod = client.pods().inNamespace(namespace).withName(identity.podName()).get();
            owner = client.apps().daemonSets().inNamespace(namespace).withName(daemonSet).get();
        } catch (KubernetesClientException e) {
            throw new AgentAuthException(Status.UNAVAILABLE.withDescription("cannot read pod "
                    + identity.podName() + " (HTTP " + e.getCode() + "); retry"));
        }
        if (pod == null || !identity.podUid().equals(pod.getMetadata().getUid())) {
            throw denied("token's pod " + identity.podName() + " (uid " + identity.podUid() + ") no longer exists");
        }
        if (pod.getSpec() == null || !node.equals(pod.getSpec().getNodeName())) {
            throw denied("pod " + identity.podName() + " runs on node "
                    + (pod.getSpec() == null ? "(none)" : pod.getSpec().getNodeName()) + ", not on " + node);
        }
        if (owner == null || !ownedByController(owner, group)) {
            throw denied("DaemonSet " + daemonSet + " of group " + group + " does not exist or was not created by "
                    + "this controller");
        }
        boolean podOfDaemonSet = pod.getMetadata().getOwnerReferences().stream().anyMatch(ref ->
                Boolean.TRUE.equals(ref.getController()) && "DaemonSet".equals(ref.getKind())
                        && daemonSet.equals(ref.getName()) && Objects.equals(ref.getUid(),
                        owner.getMetadata().getUid()));
        if (!podOfDaemonSet) {
            throw denied("pod " + identity.podName() + " is not a pod of DaemonSet " + daemonSet + " (group "
                    + group + ")");
        }
    }

    private static boolean ownedByController(DaemonSet ds, String group) {
        Map<String, String> labels = ds.getMetadata().getLabels();
        if (labels == null || !AgentDaemonSetFactory.APP.equals(labels.get(AgentDaemonSetFactory.APP_LABEL))
                || !group.equals(labels.get(AgentDaemonSetFactory.GROUP_LABEL))) {
            return false;
        }
        for (OwnerReference ref : ds.getMetadata().getOwnerReferences()) {
            if (Boolean.TRUE.equals(ref.getController()) && "NodeGroup".equals(ref.getKind())
                    && group.equals(ref.getName())) {
                return true;
            }
        }
        return false;
    }

    private static AgentAuthException denied(String reason) {
        return new AgentAuthException(Status.PERMISSION_DENIED.withDescription(reason));
    }
}
