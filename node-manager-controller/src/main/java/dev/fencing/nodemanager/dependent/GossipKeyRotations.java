package dev.fencing.nodemanager.dependent;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.keyring.KeyRotationPlanner;
import dev.fencing.nodemanager.keyring.KeyringState;
import dev.fencing.nodemanager.model.GossipKeyringSecret;
import dev.fencing.nodemanager.model.GroupModel;
import dev.fencing.nodemanager.report.AgentReports;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The I/O edge of {@link KeyRotationPlanner} (leader only): reads the group's keyring Secret, asks the planner for
 * the next step and writes it back with the Secret's resourceVersion, so two leaders in a hand-over cannot both
 * advance a phase. Every replica's informer then streams the new keyring (with its revision) to its agents. Asked at
 * every reconcile: the informer's copy answers "nothing to do" without an API call; a step is planned again from the
 * Secret as the API server holds it (a GET) and written from that.
 */
public final class GossipKeyRotations {

    private static final Logger LOG = LoggerFactory.getLogger(GossipKeyRotations.class);

    private final KubernetesClient client;
    private final String namespace;
    private final SecureRandom random;
    private final Function<String, Optional<Secret>> cached;

    GossipKeyRotations(KubernetesClient client, String namespace, SecureRandom random,
                       Function<String, Optional<Secret>> cached) {
        this.cached = cached;
        this.client = client;
        this.namespace = namespace;
        this.random = random;
    }

    /**
     * Advances the group's rotation by at most one step.
     *
     * @param window how old a report, or another member's "last heard", may be and still make an agent reachable
     * @return the planner's decision; its Event only when the step was written
     */
    public KeyRotationPlanner.Plan reconcile(NodeGroup group, GroupModel model, AgentReports reports, Instant now,
                                             Duration window) {
        String name = group.getMetadata().getName();
        Map<String, String> annotations = group.getMetadata().getAnnotations();
        String requested = annotations == null ? null : annotations.get(KeyRotationPlanner.ROTATE_ANNOTATION);
        Optional<Secret> inCache = cached.apply(name);
        Secret secret = inCache.orElseGet(() -> stored(name));
        if (secret == null) {
            return new KeyRotationPlanner.Plan(Optional.empty(), Optional.empty(), Optional.empty());
        }
        KeyRotationPlanner.Plan plan = plan(name, requested, secret, model, reports, now, window);
        if (plan.write().isEmpty()) {
            return plan;
        }
        if (inCache.isPresent()) {
            // Never written from (or into) the informer's copy: the step is planned again from the stored Secret.
            secret = stored(name);
            if (secret == null) {
                return new KeyRotationPlanner.Plan(Optional.empty(), Optional.empty(), Optional.empty());
            }
            plan = plan(name, requested, secret, model, reports, now, window);
            if (plan.write().isEmpty()) {
                return plan;
            }
        }
        KeyringState next = plan.write().get();
        secret.setData(new HashMap<>(next.data()));
        Map<String, String> merged = new HashMap<>(secret.getMetadata().getAnnotations() == null ? Map.of()
                : secret.getMetadata().getAnnotations());
        next.annotations().forEach((k, v) -> {
            if (v == null) {
                merged.remove(k);
            } else {
                merged.put(k, v);
            }
        });
        secret.getMetadata().setAnnotations(merged);
        try {
            client.secrets().inNamespace(namespace).resource(secret).update();
        } catch (KubernetesClientException e) {
            LOG.warn("event=gossip_key_rotation_write_failed group={} code={} error=\"{}\" action=\"retry at the next"
                    + " reconcile\"", name, e.getCode(), e.getMessage());
            return new KeyRotationPlanner.Plan(Optional.empty(), plan.condition(), Optional.empty());
        }
        LOG.info("event=gossip_key_rotation_step group={} request=\"{}\" phase={} keyring_revision={}", name,
                next.phase() == null ? next.completedRequest() : next.request(),
                next.phase() == null ? "Completed" : next.phase().reason(), next.revision());
        return plan;
    }

    private Secret stored(String group) {
        return client.secrets().inNamespace(namespace).withName(GossipKeyringSecret.name(group)).get();
    }

    private KeyRotationPlanner.Plan plan(String group, String requested, Secret secret, GroupModel model,
                                         AgentReports reports, Instant now, Duration window) {
        KeyringState state = KeyringState.of(secret.getData(), secret.getMetadata().getAnnotations());
        Set<String> waiting = Set.of();
        if (state.runningPhase().isPresent()) {
            Set<String> reachable = KeyRotationPlanner.reachable(model.expected().keySet(), reports::isConnected,
                    reports::latest, now, window);
            int expected = model.expected().size();
            int quorum = model.policy() != null && model.policy().quorumSize() > 0 ? model.policy().quorumSize()
                    : expected / 2 + 1;
            waiting = KeyRotationPlanner.awaited(model.expected().keySet(), reachable, reports::latest,
                    state.revision(), quorum);
        }
        return KeyRotationPlanner.plan(group, requested, state, waiting, this::newKey);
    }

    private String newKey() {
        byte[] key = new byte[32];
        random.nextBytes(key);
        return Base64.getEncoder().encodeToString(key);
    }
}
