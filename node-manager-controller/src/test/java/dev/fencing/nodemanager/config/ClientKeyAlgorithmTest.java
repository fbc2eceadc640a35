package dev.fencing.nodemanager.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import java.nio.charset.StandardCharsets;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class ClientKeyAlgorithmTest {

    private static String pkcs8Pem(String algorithm) throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance(algorithm);
        generator.initialize(algorithm.equals("EC") ? 256 : 2048);
        PrivateKey key = generator.generateKeyPair().getPrivate();
        return "-----BEGIN PRIVATE KEY-----\n" + Base64.getMimeEncoder().encodeToString(key.getEncoded())
                + "\n-----END PRIVATE KEY-----\n";
    }

    private static Config withKeyData(String pem) {
        return new ConfigBuilder(Config.empty()).withClientKeyData(Base64.getEncoder()
                .encodeToString(pem.getBytes(StandardCharsets.US_ASCII))).build();
    }

    @Test
    void aPkcs8EcKeyFromAKubeconfigIsNamedEcSoFabric8DoesNotReadItAsRsa() throws Exception {
        assertThat(ClientKeyAlgorithm.apply(withKeyData(pkcs8Pem("EC"))).getClientKeyAlgo()).isEqualTo("EC");
        assertThat(ClientKeyAlgorithm.apply(withKeyData(pkcs8Pem("RSA"))).getClientKeyAlgo()).isEqualTo("RSA");
    }

    @Test
    void theKeyDecidesOverAnAssumedAlgorithmAndAKeyThatCannotBeToldChangesNothing() throws Exception {
        Config assumed = new ConfigBuilder(withKeyData(pkcs8Pem("EC"))).withClientKeyAlgo("RSA").build();
        assertThat(ClientKeyAlgorithm.apply(assumed).getClientKeyAlgo()).isEqualTo("EC");
        Config unreadable = new ConfigBuilder(withKeyData("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"
                + "\n")).withClientKeyAlgo("RSA").build();
        assertThat(ClientKeyAlgorithm.apply(unreadable)).isSameAs(unreadable);
        assertThat(ClientKeyAlgorithm.of("-----BEGIN EC PRIVATE KEY-----\n...")).isEqualTo("EC");
        Config none = Config.empty();
        assertThat(ClientKeyAlgorithm.apply(none)).isSameAs(none);
    }
}
