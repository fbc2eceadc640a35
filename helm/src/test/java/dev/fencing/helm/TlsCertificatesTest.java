package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/** Where the AgentControl certificate comes from: tls.mode generated (default), secret, certManager, disabled. */
class TlsCertificatesTest {

    private static final String NAME = DefaultValuesRenderTest.NAME;
    private static final String NS = FencingChart.NAMESPACE;
    private static final List<String> SERVICE_NAMES = List.of(NAME, NAME + "." + NS, NAME + "." + NS + ".svc",
            NAME + "." + NS + ".svc.cluster.local");

    @Test
    void defaultInstallGeneratesAKeptSecretWithCaCertificateAndKey() {
        Secret secret = FencingChart.render().named(Secret.class, NAME + "-tls");

        assertThat(secret.getType()).isEqualTo("kubernetes.io/tls");
        assertThat(secret.getData()).containsOnlyKeys("ca.crt", "tls.crt", "tls.key");
        assertThat(secret.getMetadata().getAnnotations()).containsEntry("helm.sh/resource-policy", "keep");
        assertThat(secret.getMetadata().getNamespace()).isEqualTo(NS);
    }

    @Test
    void generatedServingCertificateNamesTheServiceAndChainsToTheGeneratedCa() throws Exception {
        Secret secret = FencingChart.render().named(Secret.class, NAME + "-tls");
        X509Certificate ca = certificate(secret, "ca.crt");
        X509Certificate serving = certificate(secret, "tls.crt");

        assertThat(dnsNames(serving)).containsExactlyInAnyOrderElementsOf(SERVICE_NAMES);
        serving.verify(ca.getPublicKey());
        ca.verify(ca.getPublicKey());
        assertThat(ca.getBasicConstraints()).as("CA flag").isGreaterThanOrEqualTo(0);
        assertThat(serving.getBasicConstraints()).as("serving certificate is no CA").isEqualTo(-1);
        assertThat(serving.getIssuerX500Principal()).isEqualTo(ca.getSubjectX500Principal());
        assertThat(serving.getExtendedKeyUsage()).contains("1.3.6.1.5.5.7.3.1");
        assertThat(Duration.between(ca.getNotBefore().toInstant(), ca.getNotAfter().toInstant()).toDays())
                .isEqualTo(3650);
        assertThat(Duration.between(serving.getNotBefore().toInstant(), serving.getNotAfter().toInstant()).toDays())
                .isEqualTo(730);
        assertThat(keyMatches(serving, secret)).as("tls.key is the serving certificate's key").isTrue();
    }

    @Test
    void validityDaysAreTakenFromValues() throws Exception {
        Secret secret = FencingChart.render("tls.generated.caValidityDays", 400, "tls.generated.certValidityDays", 30)
                .named(Secret.class, NAME + "-tls");

        X509Certificate ca = certificate(secret, "ca.crt");
        X509Certificate serving = certificate(secret, "tls.crt");
        assertThat(Duration.between(ca.getNotBefore().toInstant(), ca.getNotAfter().toInstant()).toDays())
                .isEqualTo(400);
        assertThat(Duration.between(serving.getNotBefore().toInstant(), serving.getNotAfter().toInstant()).toDays())
                .isEqualTo(30);
    }

    @Test
    void aCustomControllerAddressHostIsAddedToTheServingCertificate() throws Exception {
        Rendered r = FencingChart.render("agent.controllerAddress", "fencing.example.internal:9650");

        assertThat(dnsNames(certificate(r.named(Secret.class, NAME + "-tls"), "tls.crt")))
                .containsAll(SERVICE_NAMES).contains("fencing.example.internal");
    }

    @Test
    void anIpControllerAddressIsRefusedWithAChartCertificate() {
        assertThatThrownBy(() -> FencingChart.render("agent.controllerAddress", "10.0.0.7:9650"))
                .hasMessageContaining("agent.controllerAddress").hasMessageContaining("DNS name");
    }

    @Test
    void anIpControllerAddressIsLeftToYourOwnCertificateInSecretMode() {
        Rendered r = FencingChart.render("tls.mode", "secret", "tls.secretName", "my-tls",
                "agent.controllerAddress", "10.0.0.7:9650");

        assertThat(r.arg("--agent-controller-address")).hasValue("10.0.0.7:9650");
    }

    @Test
    void defaultControllerServesTlsFromTheGeneratedSecretAndGivesAgentsItsCa() {
        Rendered r = FencingChart.render();

        assertThat(r.args()).doesNotContain("--insecure-plaintext")
                .contains("--tls-cert=/etc/node-manager-controller/tls/tls.crt",
                        "--tls-key=/etc/node-manager-controller/tls/tls.key",
                        "--tls-ca=/etc/node-manager-controller/tls/ca.crt",
                        "--agent-ca-secret=" + NAME + "-tls");
        assertThat(r.one(Deployment.class).getSpec().getTemplate().getSpec().getVolumes())
                .filteredOn(v -> v.getName().equals("tls")).singleElement()
                .satisfies(v -> assertThat(v.getSecret().getSecretName()).isEqualTo(NAME + "-tls"));
    }

    @Test
    void generatedModeWritesTlsCrtAndTlsKeyWhateverCertKeyAndKeyKeySay() {
        Rendered r = FencingChart.render("tls.certKey", "chain.pem", "tls.keyKey", "key.pem");

        assertThat(r.arg("--tls-cert")).hasValue("/etc/node-manager-controller/tls/tls.crt");
        assertThat(r.arg("--tls-key")).hasValue("/etc/node-manager-controller/tls/tls.key");
    }

    @Test
    void aGeneratedSecretNameCanBeChosen() {
        Rendered r = FencingChart.render("tls.secretName", "agent-control-tls");

        assertThat(r.named(Secret.class, "agent-control-tls").getData()).containsKey("ca.crt");
        assertThat(r.arg("--agent-ca-secret")).hasValue("agent-control-tls");
    }

    @Test
    void eachInstallGeneratesItsOwnCa() throws Exception {
        X509Certificate first = certificate(FencingChart.render().named(Secret.class, NAME + "-tls"), "ca.crt");
        X509Certificate second = certificate(FencingChart.render().named(Secret.class, NAME + "-tls"), "ca.crt");

        assertThat(first.getPublicKey()).isNotEqualTo(second.getPublicKey());
    }

    @Test
    void secretModeRendersNoSecretAndMountsTheNamedOne() {
        Rendered r = FencingChart.render("tls.mode", "secret", "tls.secretName", "my-tls");

        assertThat(r.all(Secret.class)).isEmpty();
        assertThat(r.all(GenericKubernetesResource.class)).isEmpty();
        assertThat(r.arg("--agent-ca-secret")).hasValue("my-tls");
        assertThat(r.args()).doesNotContain("--insecure-plaintext");
    }

    @Test
    void anUnknownModeIsRejected() {
        assertThatThrownBy(() -> FencingChart.render("tls.mode", "self-signed"))
                .hasMessageContaining("/tls/mode");
    }

    @Test
    void theOldEnabledSwitchIsRejectedInsteadOfIgnored() {
        assertThatThrownBy(() -> FencingChart.render("tls.enabled", false))
                .hasMessageContaining("additional properties 'enabled' not allowed");
    }

    @Test
    void disabledModeRendersNoSecretAndRunsPlaintext() {
        Rendered r = FencingChart.render("tls.mode", "disabled");

        assertThat(r.all(Secret.class)).isEmpty();
        assertThat(r.args()).contains("--insecure-plaintext").noneMatch(a -> a.startsWith("--agent-ca-secret"));
    }

    @Test
    void certManagerModeRendersASelfSignedCaChainAndTheServingCertificate() {
        Rendered r = FencingChart.render("tls.mode", "certManager");

        assertThat(r.all(Secret.class)).isEmpty();
        assertThat(r.describe()).contains("Issuer/" + NAME + "-selfsigned", "Certificate/" + NAME + "-ca",
                "Issuer/" + NAME + "-ca", "Certificate/" + NAME);
        GenericKubernetesResource ca = resource(r, "Certificate", NAME + "-ca");
        assertThat(field(ca, "spec", "isCA")).isEqualTo(true);
        assertThat(field(ca, "spec", "issuerRef", "name")).isEqualTo(NAME + "-selfsigned");
        assertThat(field(resource(r, "Issuer", NAME + "-ca"), "spec", "ca", "secretName")).isEqualTo(NAME + "-ca");
        GenericKubernetesResource serving = resource(r, "Certificate", NAME);
        assertThat(serving.getApiVersion()).isEqualTo("cert-manager.io/v1");
        assertThat(field(serving, "spec", "secretName")).isEqualTo(NAME + "-tls");
        assertThat(field(serving, "spec", "dnsNames")).isEqualTo(SERVICE_NAMES);
        assertThat(field(serving, "spec", "issuerRef", "name")).isEqualTo(NAME + "-ca");
        assertThat(field(serving, "spec", "duration")).isEqualTo("17520h");
        assertThat(field(serving, "spec", "renewBefore")).isEqualTo("720h");
        assertThat(field(serving, "spec", "privateKey", "encoding")).as("the controller reads PKCS#8 only")
                .isEqualTo("PKCS8");
        assertThat(r.arg("--agent-ca-secret")).hasValue(NAME + "-tls");
        assertThat(r.args()).doesNotContain("--insecure-plaintext");
    }

    @Test
    void certManagerWithAnIssuerRefRendersOnlyTheCertificateFromThatIssuer() {
        Rendered r = FencingChart.render("tls.mode", "certManager", "tls.certManager.issuerRef.name", "corp-ca",
                "tls.certManager.issuerRef.kind", "ClusterIssuer", "tls.secretName", "agent-control-tls");

        assertThat(r.describe()).filteredOn(d -> d.startsWith("Issuer/") || d.startsWith("Certificate/"))
                .containsExactly("Certificate/" + NAME);
        GenericKubernetesResource serving = resource(r, "Certificate", NAME);
        assertThat(field(serving, "spec", "issuerRef", "name")).isEqualTo("corp-ca");
        assertThat(field(serving, "spec", "issuerRef", "kind")).isEqualTo("ClusterIssuer");
        assertThat(field(serving, "spec", "issuerRef", "group")).isEqualTo("cert-manager.io");
        assertThat(field(serving, "spec", "secretName")).isEqualTo("agent-control-tls");
        assertThat(r.arg("--agent-ca-secret")).hasValue("agent-control-tls");
    }

    @Test
    void anIssuerRefWithoutANameFailsNamingIt() {
        assertThatThrownBy(() -> FencingChart.render("tls.mode", "certManager",
                "tls.certManager.issuerRef.kind", "ClusterIssuer"))
                .hasMessageContaining("tls.certManager.issuerRef.name is required");
    }

    @Test
    void lintPassesInEveryMode() {
        Map<String, Map<String, String>> modes = Map.of(
                "generated", Map.of(),
                "secret", Map.of("  mode: generated", "  mode: secret", "  secretName: \"\"", "  secretName: my-tls"),
                "certManager", Map.of("  mode: generated", "  mode: certManager"),
                "disabled", Map.of("  mode: generated", "  mode: disabled"));
        modes.forEach((mode, lines) -> {
            LintResult result = FencingChart.lintWithValuesLines(lines);
            assertThat(result.isFailed()).as("lint of mode %s: %s", mode, result.getMessages()).isFalse();
            assertThat(result.getMessages()).as(mode).noneMatch(m -> m.contains("[ERROR]") || m.contains("[WARNING]"));
        });
    }

    private static GenericKubernetesResource resource(Rendered r, String kind, String name) {
        return r.all(GenericKubernetesResource.class).stream()
                .filter(o -> o.getKind().equals(kind) && o.getMetadata().getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + "/" + name + " in " + r.describe()));
    }

    private static Object field(GenericKubernetesResource resource, Object... path) {
        return resource.get(path);
    }

    private static X509Certificate certificate(Secret secret, String key) throws Exception {
        byte[] pem = Base64.getDecoder().decode(secret.getData().get(key));
        return (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(pem));
    }

    private static List<String> dnsNames(X509Certificate cert) throws Exception {
        Collection<List<?>> sans = Objects.requireNonNullElse(cert.getSubjectAlternativeNames(), List.of());
        return sans.stream().filter(san -> Integer.valueOf(2).equals(san.get(0))).map(san -> (String) san.get(1))
                .toList();
    }

    /** tls.key is the private half of the certificate's RSA key: same modulus. */
    private static boolean keyMatches(X509Certificate cert, Secret secret) throws Exception {
        String pem = new String(Base64.getDecoder().decode(secret.getData().get("tls.key")), StandardCharsets.US_ASCII);
        RSAPrivateCrtKey key = (RSAPrivateCrtKey) privateKey(pem, "RSA");
        return key.getModulus().equals(((RSAPublicKey) cert.getPublicKey()).getModulus());
    }

    /** tls.key the way the controller reads it (grpc CertificateUtils): one PKCS#8 "PRIVATE KEY" PEM block. */
    private static PrivateKey privateKey(String pem, String algorithm) throws Exception {
        List<String> lines = pem.lines().toList();
        assertThat(lines).first().isEqualTo("-----BEGIN PRIVATE KEY-----");
        assertThat(lines).last().isEqualTo("-----END PRIVATE KEY-----");
        String body = String.join("", lines.subList(1, lines.size() - 1));
        return KeyFactory.getInstance(algorithm)
                .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(body)));
    }
}
