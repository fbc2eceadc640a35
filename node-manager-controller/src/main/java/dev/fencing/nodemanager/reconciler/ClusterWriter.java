package dev.fencing.nodemanager.reconciler;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.peervote.NodeConditionPatch;
import dev.fencing.nodemanager.status.GroupEvent;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import dev.fencing.nodemanager.status.NodeFacts;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's writes besides status: Node labels by JSON patch (no SSA, no strategic merge: what the CRUD mock
 * supports is what ships) and core/v1 Events.
 */
public final class ClusterWriter {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterWriter.class);
    /** Events about cluster-scoped objects go to this namespace, as kubectl describe expects. */
    static final String EVENT_NAMESPACE = "default";

    private final KubernetesClient client;
    private final InstantSource clock;
    private final AtomicLong sequence = new AtomicLong();

    public ClusterWriter(KubernetesClient client, InstantSource clock) {
        this.client = client;
        this.clock = clock;
    }

    /**
     * Sets (value) or removes (null) labels of one Node with a JSON patch ({@code add} / {@code remove} per label):
     * unlike a merge patch with null values, the CRUD mock and the API server agree on what it does.
     */
    public void patchLabels(String node, Map<String, String> changes) {
        List<Map<String, Object>> ops = new ArrayList<>();
        changes.forEach((k, v) -> {
            String path = "/metadata/labels/" + k.replace("~", "~0").replace("/", "~1");
            Map<String, Object> op = new LinkedHashMap<>();
            op.put("op", v == null ? "remove" : "add");
            op.put("path", path);
            if (v != null) {
                op.put("value", v);
            }
            ops.add(op);
        });
        String patch = Serialization.asJson(ops);
        try {
            client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON), patch);
            LOG.info("event=node_labels_patched node={} changes={}", node, changes);
        } catch (KubernetesClientException e) {
            LOG.warn("event=node_label_patch_failed node={} code={} error=\"{}\"", node, e.getCode(), e.getMessage());
        }
    }

    /**
     * Sets (value) or removes (null) one annotation of a Node, leaving the others alone: a merge patch sets it (and
     * creates the annotations map when the Node has none), a JSON patch removes it. True when the API server took it.
     */
    public boolean patchAnnotation(String node, String key, String value) {
        try {
            if (value == null) {
                Map<String, Object> op = new LinkedHashMap<>();
                op.put("op", "remove");
                op.put("path", "/metadata/annotations/" + key.replace("~", "~0").replace("/", "~1"));
                client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON),
                        Serialization.asJson(List.of(op)));
            } else {
                client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                        Serialization.asJson(Map.of("metadata", Map.of("annotations", Map.of(key, value)))));
            }
            LOG.info("event=node_annotation_patched node={} annotation={} value={}", node, key,
                    value == null ? "(removed)" : value);
            return true;
        } catch (KubernetesClientException e) {
            LOG.warn("event=node_annotation_patch_failed node={} annotation={} code={} error=\"{}\"", node, key,
                    e.getCode(), e.getMessage());
            return false;
        }
    }

    /**
     * Adds (with our marker annotation) or removes the out-of-service taint; only our own taint is removed. The JSON
     * patch first tests the resourceVersion it was computed from, so it applies to exactly the Node read: a taint list
     * that changed meanwhile (the node-lifecycle controller removing {@code unreachable} as the node returns, someone
     * adding theirs) makes it fail and the next reconcile computes it again, instead of an index-based edit removing
     * someone else's taint or annotations.
     *
     * @return whether the write went through (a refused or failed one is logged; the next reconcile tries again)
     */
    public boolean setOutOfService(String node, boolean add) {
        try {
            Node n = client.nodes().withName(node).get();
            if (n == null) {
                LOG.warn("event=out_of_service_patch_failed node={} add={} code=404 error=\"no such Node\"", node,
                        add);
                return false;
            }
            if (add && NodeFacts.of(n, null).ready()) {
                // Planned from the caches a moment ago; the Node as the API server has it now says its kubelet is
                // back: a running node must never get the taint (it force-deletes its pods and volumes).
                LOG.warn("event=out_of_service_skipped node={} reason=\"the Node is Ready again\"", node);
                return false;
            }
            client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON),
                    Serialization.asJson(outOfServicePatch(n, add, clock.instant().toString())));
            LOG.info("event=out_of_service_{} node={}", add ? "added" : "removed", node);
            return true;
        } catch (KubernetesClientException e) {
            LOG.warn("event=out_of_service_patch_failed node={} add={} code={} error=\"{}\"", node, add, e.getCode(),
                    e.getMessage());
            return false;
        }
    }

    /**
     * The JSON patch that sets or removes our out-of-service taint on {@code n}, valid only for its resourceVersion:
     * it tests the version, then sets the whole spec and annotations as read plus our change (whole members, since
     * a member that is empty may be absent on the server; the test makes them exactly what was read).
     */
    static List<Map<String, Object>> outOfServicePatch(Node n, boolean add, String timeAdded) {
        io.fabric8.kubernetes.api.model.NodeSpec spec = n.getSpec() == null
                ? new io.fabric8.kubernetes.api.model.NodeSpec()
                : new io.fabric8.kubernetes.api.model.NodeSpecBuilder(n.getSpec()).build();
        List<Taint> taints = spec.getTaints() == null ? new ArrayList<>() : new ArrayList<>(spec.getTaints());
        taints.removeIf(t -> NodeFacts.OUT_OF_SERVICE_TAINT.equals(t.getKey()));
        if (add) {
            taints.add(new TaintBuilder().withKey(NodeFacts.OUT_OF_SERVICE_TAINT)
                    .withValue(NodeFacts.OUT_OF_SERVICE_VALUE).withEffect(NodeFacts.OUT_OF_SERVICE_EFFECT)
                    .withTimeAdded(timeAdded).build());
        }
        spec.setTaints(taints);
        Map<String, String> annotations = n.getMetadata().getAnnotations() == null ? new LinkedHashMap<>()
                : new LinkedHashMap<>(n.getMetadata().getAnnotations());
        boolean hadAnnotations = !annotations.isEmpty();
        annotations.remove(NodeFacts.TAINTED_BY_ANNOTATION);
        if (add) {
            annotations.put(NodeFacts.TAINTED_BY_ANNOTATION, NodeFacts.TAINTED_BY);
        }
        List<Map<String, Object>> ops = new ArrayList<>();
        ops.add(NodeConditionPatch.op("test", "/metadata/resourceVersion",
                n.getMetadata().getResourceVersion()));
        // "add" sets a member whether it exists or not
        ops.add(NodeConditionPatch.op("add", "/spec", spec));
        if (hadAnnotations || !annotations.isEmpty()) {
            ops.add(NodeConditionPatch.op("add", "/metadata/annotations", annotations));
        }
        return ops;
    }

    /**
     * Applies a JSON patch to a Node's status subresource (one condition of ours; the kubelet owns the rest). A
     * refused patch (the condition list moved under us) is logged and computed again at the next reconcile.
     */
    public void patchNodeStatus(String node, List<Map<String, Object>> ops) {
        try {
            client.nodes().withName(node).subresource("status").patch(PatchContext.of(PatchType.JSON),
                    Serialization.asJson(ops));
            LOG.info("event=node_condition_patched node={} ops={}", node, ops.size());
        } catch (KubernetesClientException e) {
            LOG.warn("event=node_condition_patch_failed node={} code={} error=\"{}\"", node, e.getCode(),
                    e.getMessage());
        }
    }

    /**
     * Deletes a fenced Node so the platform replaces its machine (afterFence DeleteNode). A Node already gone is
     * fine: the fencing it stood for is over.
     */
    public boolean deleteNode(String node) {
        try {
            // Read fresh, then delete only that version: planned from the caches a moment ago, the Node may be
            // Ready again by now (its machine is running: nothing to replace).
            Node fresh = client.nodes().withName(node).get();
            if (fresh == null) {
                LOG.info("event=node_deleted node={} reason=fenced already=true", node);
                return true;
            }
            if (NodeFacts.of(fresh, null).ready()) {
                LOG.warn("event=node_delete_skipped node={} reason=\"the Node is Ready again\"", node);
                return false;
            }
            client.nodes().withName(node).lockResourceVersion(fresh.getMetadata().getResourceVersion()).delete();
            LOG.info("event=node_deleted node={} reason=fenced", node);
            return true;
        } catch (KubernetesClientException e) {
            LOG.warn("event=node_delete_failed node={} code={} error=\"{}\"", node, e.getCode(), e.getMessage());
            return false;
        }
    }

    /** Emits one Event about a Node or the NodeGroup. */
    public void emit(GroupEvent event, NodeGroup group, Map<String, Node> nodes) {
        ObjectReferenceBuilder ref = new ObjectReferenceBuilder().withName(event.name());
        if (event.onNode()) {
            Node n = nodes.get(event.name());
            ref.withKind("Node").withApiVersion("v1").withUid(n == null ? null : n.getMetadata().getUid());
        } else {
            ref.withKind(NodeGroup.KIND).withApiVersion(NodeGroup.GROUP + "/" + NodeGroup.VERSION)
                    .withUid(group.getMetadata().getUid());
        }
        String now = clock.instant().toString();
        Event e = new EventBuilder()
                .withNewMetadata()
                    .withName(event.name() + "." + Long.toHexString(clock.instant().toEpochMilli())
                            + Long.toHexString(sequence.incrementAndGet()))
                    .withNamespace(EVENT_NAMESPACE)
                .endMetadata()
                .withInvolvedObject(ref.build())
                .withType(event.type())
                .withReason(event.reason())
                .withMessage(event.message())
                .withFirstTimestamp(now)
                .withLastTimestamp(now)
                .withCount(1)
                .withNewSource().withComponent("node-manager-controller").endSource()
                .withReportingComponent("node-manager-controller")
                .build();
        try {
            client.v1().events().inNamespace(EVENT_NAMESPACE).resource(e).create();
            LOG.info("event=k8s_event reason={} object={} message=\"{}\"", event.reason(), event.name(),
                    event.message());
        } catch (KubernetesClientException ex) {
            LOG.warn("event=k8s_event_failed reason={} object={} error=\"{}\"", event.reason(), event.name(),
                    ex.getMessage());
        }
    }
}
