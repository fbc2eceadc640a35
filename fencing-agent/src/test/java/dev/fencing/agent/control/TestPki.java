package dev.fencing.agent.control;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** A test certificate authority issuing serving certificates for DNS names, written as PEM files. */
public final class TestPki {

    private final KeyPair caKeys;
    private final X509Certificate ca;
    private final SecureRandom random;

    /** @param seed fixed, so serial numbers repeat between runs */
    public TestPki(String name, long seed) throws Exception {
        this.random = new SecureRandom();
        random.setSeed(seed);
        this.caKeys = keys();
        this.ca = sign(new X500Name("CN=" + name), caKeys, new X500Name("CN=" + name), caKeys, true);
    }

    /** Writes the CA certificate to {@code file}. */
    public Path writeCa(Path file) throws IOException {
        return Files.writeString(file, pem(ca));
    }

    /** Issues a serving certificate for {@code dnsNames}; writes {@code <prefix>.crt} and {@code <prefix>.key}. */
    public Path[] issue(Path dir, String prefix, String... dnsNames) throws Exception {
        KeyPair keys = keys();
        X509Certificate cert = sign(new X500Name("CN=" + dnsNames[0]), keys, new X500Name(ca.getSubjectX500Principal()
                .getName()), caKeys, false, dnsNames);
        Path crt = Files.writeString(dir.resolve(prefix + ".crt"), pem(cert));
        Path key = Files.writeString(dir.resolve(prefix + ".key"), pem(keys.getPrivate()));
        return new Path[] {crt, key};
    }

    private KeyPair keys() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(256, random);
        return g.generateKeyPair();
    }

    private X509Certificate sign(X500Name subject, KeyPair subjectKeys, X500Name issuer, KeyPair issuerKeys,
                                 boolean isCa, String... dnsNames) throws Exception {
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(issuer, new BigInteger(64, random),
                Date.from(now.minus(Duration.ofMinutes(5))), Date.from(now.plus(Duration.ofDays(1))), subject,
                subjectKeys.getPublic());
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(isCa));
        if (dnsNames.length > 0) {
            GeneralName[] names = new GeneralName[dnsNames.length];
            for (int i = 0; i < dnsNames.length; i++) {
                names[i] = new GeneralName(GeneralName.dNSName, dnsNames[i]);
            }
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names));
        }
        return new JcaX509CertificateConverter().getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKeys.getPrivate())));
    }

    private static String pem(Object o) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(o instanceof java.security.PrivateKey k
                    ? new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(k, null).generate() : o);
        }
        return out.toString();
    }
}
