package dev.fencing.nodemanager.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.api.v1.NodeGroup;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.security.SecureRandom;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class GossipKeyringSecretTest {

    private static String key(int bytes) {
        return Base64.getEncoder().encodeToString(new byte[bytes]);
    }

    private static Secret secret(String... kv) {
        SecretBuilder b = new SecretBuilder().withNewMetadata().withName("fencing-gossip-g").withNamespace("ns")
                .endMetadata();
        for (int i = 0; i < kv.length; i += 2) {
            b.addToData(kv[i], kv[i + 1]);
        }
        return b.build();
    }

    @Test
    void aGeneratedSecretHoldsOneRandom32BytePrimaryAndIsOwnedByTheGroup() {
        NodeGroup g = new NodeGroup();
        g.setMetadata(new ObjectMetaBuilder().withName("g").withUid("u").build());
        Secret s = GossipKeyringSecret.generate(g, "ns", new SecureRandom());
        assertThat(s.getMetadata().getName()).isEqualTo("fencing-gossip-g");
        assertThat(s.getMetadata().getLabels()).containsEntry(GossipKeyringSecret.GROUP_LABEL, "g");
        assertThat(s.getMetadata().getOwnerReferences().get(0).getUid()).isEqualTo("u");
        assertThat(GossipKeyringSecret.parse(s).keyring().orElseThrow().getPrimary().size()).isEqualTo(32);
    }

    @Test
    void primaryAndSecondariesAreReadForRotation() {
        var parsed = GossipKeyringSecret.parse(secret("primary", key(32), "secondary-0", key(16), "other", "x"));
        assertThat(parsed.keyring()).isPresent();
        assertThat(parsed.keyring().get().getSecondaryCount()).isEqualTo(1);
        assertThat(parsed.keyring().get().getSecondary(0).size()).isEqualTo(16);
    }

    @Test
    void aMissingPrimaryOrAWrongKeyLengthIsAProblemNamingTheDataKey() {
        assertThat(GossipKeyringSecret.parse(secret("secondary-0", key(32))).problem())
                .contains("ns/fencing-gossip-g").contains("'primary'");
        var wrong = GossipKeyringSecret.parse(secret("primary", key(32), "secondary-1", key(20)));
        assertThat(wrong.keyring()).isEmpty();
        assertThat(wrong.problem()).contains("'secondary-1'").contains("20 bytes");
        assertThat(GossipKeyringSecret.parse(secret("primary", "%%%")).problem()).contains("not base64");
    }
}
