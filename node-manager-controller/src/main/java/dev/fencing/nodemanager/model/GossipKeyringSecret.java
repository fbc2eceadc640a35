package dev.fencing.nodemanager.model;

import com.google.protobuf.ByteString;
import dev.fencing.api.v1.NodeGroup;
import dev.fencing.nodemanager.keyring.KeyringState;
import dev.fencing.proto.nodemanager.v1.GossipKeyring;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A group's gossip encryption keys (memberlist AES-GCM keyring) live in a Secret {@code fencing-gossip-<group>} in the
 * controller's namespace: data {@code primary} (used to encrypt) and optional {@code secondary-*} (still accepted for
 * decryption, for rotation: move the old primary to a secondary, set a new primary, remove the secondary once every
 * agent has the new keyring). Each key is 16, 24 or 32 bytes. The leader creates the Secret with a random 32-byte
 * primary; every replica reads it from its informer and streams it to the group's agents.
 */
public final class GossipKeyringSecret {

    /** Label on keyring Secrets; its value is the group. */
    public static final String GROUP_LABEL = "node-manager.deckhouse.io/gossip-keyring";
    /** Data key of the primary key. */
    public static final String PRIMARY = "primary";
    /** Prefix of the data keys of secondary keys. */
    public static final String SECONDARY_PREFIX = "secondary-";

    private GossipKeyringSecret() {
    }

    /** {@code fencing-gossip-<group>}. */
    public static String name(String group) {
        return "fencing-gossip-" + group;
    }

    /** The outcome of reading a keyring Secret. */
    public record Parsed(Optional<GossipKeyring> keyring, String problem) {
    }

    /** Reads the keyring; a missing or malformed key is a problem that says which data key and why. */
    public static Parsed parse(Secret secret) {
        Map<String, String> data = secret.getData() == null ? Map.of() : new TreeMap<>(secret.getData());
        String ref = "Secret " + secret.getMetadata().getNamespace() + "/" + secret.getMetadata().getName();
        if (!data.containsKey(PRIMARY)) {
            return new Parsed(Optional.empty(), ref + " has no data key '" + PRIMARY + "'");
        }
        GossipKeyring.Builder keyring = GossipKeyring.newBuilder()
                .setRevision(KeyringState.revisionOf(secret.getMetadata().getAnnotations()));
        for (Map.Entry<String, String> e : data.entrySet()) {
            boolean primary = e.getKey().equals(PRIMARY);
            if (!primary && !e.getKey().startsWith(SECONDARY_PREFIX)) {
                continue;
            }
            byte[] key;
            try {
                key = Base64.getDecoder().decode(e.getValue().trim());
            } catch (IllegalArgumentException ex) {
                return new Parsed(Optional.empty(), ref + " data key '" + e.getKey() + "' is not base64");
            }
            if (key.length != 16 && key.length != 24 && key.length != 32) {
                return new Parsed(Optional.empty(), ref + " data key '" + e.getKey() + "' holds " + key.length
                        + " bytes; AES keys are 16, 24 or 32 bytes");
            }
            if (primary) {
                keyring.setPrimary(ByteString.copyFrom(key));
            } else {
                keyring.addSecondary(ByteString.copyFrom(key));
            }
        }
        return new Parsed(Optional.of(keyring.build()), "");
    }

    /** A new keyring Secret with a random 32-byte primary, owned by the NodeGroup. */
    public static Secret generate(NodeGroup group, String namespace, SecureRandom random) {
        byte[] key = new byte[32];
        random.nextBytes(key);
        String g = group.getMetadata().getName();
        return new SecretBuilder()
                .withNewMetadata()
                    .withName(name(g))
                    .withNamespace(namespace)
                    .addToLabels(GROUP_LABEL, g)
                    .withOwnerReferences(new OwnerReferenceBuilder()
                            .withApiVersion(group.getApiVersion())
                            .withKind(group.getKind())
                            .withName(g)
                            .withUid(group.getMetadata().getUid())
                            .withBlockOwnerDeletion(true)
                            .build())
                .endMetadata()
                .withType("Opaque")
                .addToData(PRIMARY, Base64.getEncoder().encodeToString(key))
                .build();
    }
}
