package dev.fencing.nodemanager.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.proto.nodemanager.v1.ApiServerProbe;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ApiServerProbesTest {

    private static final String PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

    private static Config client(String master) {
        return new ConfigBuilder(Config.empty()).withMasterUrl(master).build();
    }

    @Test
    void agentsProbeTheAddressAndCaTheControllerUses() {
        Config c = new ConfigBuilder(client("https://10.96.0.1:443/")).withCaCertData(
                Base64.getEncoder().encodeToString(PEM.getBytes(StandardCharsets.US_ASCII))).build();
        ApiServerProbe probe = ApiServerProbes.from(c, null);
        assertThat(probe.getUrl()).isEqualTo("https://10.96.0.1:443");
        assertThat(probe.getCaBundlePem().toStringUtf8()).isEqualTo(PEM);
    }

    @Test
    void theCaFileIsReadWhenThereIsNoInlineCa(@TempDir Path dir) throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.crt"), PEM);
        Config c = new ConfigBuilder(client("https://10.96.0.1:443")).withCaCertFile(ca.toString()).build();
        assertThat(ApiServerProbes.from(c, "").getCaBundlePem().toStringUtf8()).isEqualTo(PEM);
        Config missing = new ConfigBuilder(client("https://10.96.0.1:443"))
                .withCaCertFile(dir.resolve("absent.crt").toString()).build();
        assertThatThrownBy(() -> ApiServerProbes.from(missing, null)).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("absent.crt");
    }

    @Test
    void theOverrideReplacesTheUrlAndKeepsTheCa() {
        Config c = new ConfigBuilder(client("https://10.96.0.1:443")).withCaCertData(
                Base64.getEncoder().encodeToString(PEM.getBytes(StandardCharsets.US_ASCII))).build();
        ApiServerProbe probe = ApiServerProbes.from(c, "https://api.example:6443/");
        assertThat(probe.getUrl()).isEqualTo("https://api.example:6443");
        assertThat(probe.getCaBundlePem().toStringUtf8()).isEqualTo(PEM);
    }

    @Test
    void withoutACaTheBundleIsEmptySoTheAgentUsesItsOwn() {
        assertThat(ApiServerProbes.from(client("http://127.0.0.1:8080"), null).getCaBundlePem().isEmpty()).isTrue();
    }
}
