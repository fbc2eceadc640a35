package dev.fencing.kubetest;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The certificates of one control plane, as kubeadm would lay them out but generated in process: a CA that signs
 * the API server's serving certificate and every client certificate (user = CN, groups = O), and the
 * service-account signing key pair. Everything is ECDSA P-256 and valid for one day; files are PEM, keys PKCS#8.
 */
final class KubePki {

    private static final Duration VALIDITY = Duration.ofDays(1);
    private static final String SIGNATURE = "SHA256withECDSA";

    private final Path dir;
    private final KeyPair caKeys;
    private final X509Certificate caCert;
    private final AtomicLong serials = new AtomicLong(2);
    private final SecureRandom random = new SecureRandom();

    private KubePki(Path dir, KeyPair caKeys, X509Certificate caCert) {
        this.dir = dir;
        this.caKeys = caKeys;
        this.caCert = caCert;
    }

    /** A PEM certificate and its PKCS#8 key, as files and as text (for kubeconfig {@code *-data}). */
    record Pair(Path cert, Path key, String certPem, String keyPem) {
    }

    /** Creates the CA ({@code ca.crt}, {@code ca.key}) and the service-account keys in {@code dir}. */
    static KubePki create(Path dir) {
        try {
            Files.createDirectories(dir);
            KeyPair keys = newKeys();
            X500Name name = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, "fencing-test-kubernetes-ca")
                    .build();
            Instant now = Instant.now();
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name, BigInteger.ONE,
                    Date.from(now.minus(Duration.ofMinutes(5))), Date.from(now.plus(VALIDITY)), name,
                    keys.getPublic());
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            builder.addExtension(Extension.keyUsage, true,
                    new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign | KeyUsage.digitalSignature));
            X509Certificate ca = sign(builder, keys);
            KubePki pki = new KubePki(dir, keys, ca);
            pki.write("ca.crt", pem(ca));
            pki.write("ca.key", pem(keys.getPrivate()));
            KeyPair sa = newKeys();
            pki.write("sa.key", pem(sa.getPrivate()));
            pki.write("sa.pub", pem(sa.getPublic()));
            return pki;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the control plane's certificates to " + dir, e);
        }
    }

    Path ca() {
        return dir.resolve("ca.crt");
    }

    Path caKey() {
        return dir.resolve("ca.key");
    }

    String caPem() {
        return pem(caCert);
    }

    Path serviceAccountKey() {
        return dir.resolve("sa.key");
    }

    Path serviceAccountPublicKey() {
        return dir.resolve("sa.pub");
    }

    /** A serving certificate ({@code <file>.crt/.key}) for the given DNS names and IP addresses. */
    Pair serving(String file, String commonName, List<String> dnsNames, List<String> addresses) {
        List<GeneralName> names = new ArrayList<>();
        dnsNames.forEach(n -> names.add(new GeneralName(GeneralName.dNSName, n)));
        addresses.forEach(a -> names.add(new GeneralName(GeneralName.iPAddress, a)));
        return issue(file, subject(commonName, List.of()), KeyPurposeId.id_kp_serverAuth,
                new GeneralNames(names.toArray(GeneralName[]::new)));
    }

    /** A client certificate: Kubernetes reads the user from CN and the groups from O. */
    Pair client(String file, String user, List<String> groups) {
        return issue(file, subject(user, groups), KeyPurposeId.id_kp_clientAuth, null);
    }

    private Pair issue(String file, X500Name subject, KeyPurposeId purpose, GeneralNames altNames) {
        KeyPair keys = newKeys();
        Instant now = Instant.now();
        X500Name issuer = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, "fencing-test-kubernetes-ca")
                .build();
        try {
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(issuer,
                    BigInteger.valueOf(serials.getAndIncrement()).shiftLeft(32)
                            .or(BigInteger.valueOf(random.nextInt() & 0x7fffffff)),
                    Date.from(now.minus(Duration.ofMinutes(5))), Date.from(now.plus(VALIDITY)), subject,
                    keys.getPublic());
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purpose));
            if (altNames != null) {
                builder.addExtension(Extension.subjectAlternativeName, false, altNames);
            }
            X509Certificate cert = sign(builder, caKeys);
            String certPem = pem(cert);
            String keyPem = pem(keys.getPrivate());
            return new Pair(write(file + ".crt", certPem), write(file + ".key", keyPem), certPem, keyPem);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot issue " + file + " in " + dir, e);
        }
    }

    private static X500Name subject(String commonName, List<String> groups) {
        X500NameBuilder name = new X500NameBuilder(BCStyle.INSTANCE);
        groups.forEach(g -> name.addRDN(BCStyle.O, g));
        name.addRDN(BCStyle.CN, commonName);
        return name.build();
    }

    private Path write(String file, String content) throws IOException {
        Path path = dir.resolve(file);
        Files.writeString(path, content, StandardCharsets.US_ASCII);
        return path;
    }

    private static KeyPair newKeys() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM cannot make P-256 keys: " + e.getMessage(), e);
        }
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, KeyPair signer) {
        try {
            return new JcaX509CertificateConverter()
                    .getCertificate(builder.build(new JcaContentSignerBuilder(SIGNATURE).build(signer.getPrivate())));
        } catch (OperatorCreationException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot sign a test certificate: " + e.getMessage(), e);
        }
    }

    private static String pem(Object object) {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
            writer.writeObject(object instanceof java.security.PrivateKey key
                    ? new org.bouncycastle.util.io.pem.PemObject("PRIVATE KEY", key.getEncoded())
                    : object);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }
}
