package dev.fencing.nodemanager.escalation;

import dev.fencing.api.fencing.v1alpha1.SecretKeyRef;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;

/**
 * Secret values read through the API when an agent runs (GET, no cache and no watch, so the controller needs only
 * {@code get} on the Secrets a NodeFencingConfig names, and a password never stays in memory between runs).
 */
public final class KubernetesSecretSource implements SecretSource {

    private final KubernetesClient client;

    /** @param client the controller's client */
    public KubernetesSecretSource(KubernetesClient client) {
        this.client = client;
    }

    @Override
    public Optional<String> read(SecretKeyRef ref) {
        Secret secret = client.secrets().inNamespace(ref.namespace()).withName(ref.name()).get();
        if (secret == null) {
            return Optional.empty();
        }
        if (secret.getData() != null && secret.getData().get(ref.key()) != null) {
            return Optional.of(new String(Base64.getDecoder().decode(secret.getData().get(ref.key())),
                    StandardCharsets.UTF_8));
        }
        if (secret.getStringData() != null) {
            return Optional.ofNullable(secret.getStringData().get(ref.key()));
        }
        return Optional.empty();
    }
}
