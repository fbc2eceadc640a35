package dev.fencing.nodemanager.dependent;

import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.model.GossipKeyringSecret;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.security.SecureRandom;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The group's gossip keyring Secret as a dependent of its NodeGroup: created with a random key when missing, never
 * replaced (keys change only through the phased {@link GossipKeyRotations}), removed with the group by garbage collection.
 */
public final class GossipKeyringSecrets {

    private static final Logger LOG = LoggerFactory.getLogger(GossipKeyringSecrets.class);

    private final KubernetesClient client;
    private final String namespace;
    private final SecureRandom random = new SecureRandom();
    private final Function<String, Optional<Secret>> cached;
    private final GossipKeyRotations rotations;

    /**
     * @param cached a group's keyring Secret as this replica's informer holds it (then no GET is needed to know it
     *               exists, nor to know that no rotation step is due)
     */
    public GossipKeyringSecrets(KubernetesClient client, String namespace, Function<String, Optional<Secret>> cached) {
        this.cached = cached;
        this.client = client;
        this.namespace = namespace;
        this.rotations = new GossipKeyRotations(client, namespace, random, cached);
    }

    /** The three-phase key rotation of the same Secrets. */
    public GossipKeyRotations rotations() {
        return rotations;
    }

    /**
     * Creates the group's keyring Secret unless it exists; returns true when it was created. Asked at every reconcile:
     * the informer's copy answers without an API call; only when it has none (not created yet, or not seen yet) does
     * a GET decide.
     */
    public boolean ensure(NodeGroup group) {
        String name = GossipKeyringSecret.name(group.getMetadata().getName());
        if (cached.apply(group.getMetadata().getName()).isPresent()
                || client.secrets().inNamespace(namespace).withName(name).get() != null) {
            return false;
        }
        try {
            client.secrets().inNamespace(namespace).resource(GossipKeyringSecret.generate(group, namespace, random))
                    .create();
            LOG.info("event=gossip_keyring_created group={} secret={}/{}", group.getMetadata().getName(), namespace,
                    name);
            return true;
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                return false;
            }
            throw e;
        }
    }
}
