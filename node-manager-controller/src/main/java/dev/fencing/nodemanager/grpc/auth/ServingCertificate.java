package dev.fencing.nodemanager.grpc.auth;

import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.CertificateUtils;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The AgentControl serving certificate, reloaded from its PEM files without a restart: every
 * {@code reloadInterval} the files' modification times are checked and, when either changed (the kubelet swapped
 * a renewed Secret in, cert-manager renewed it), the pair is loaded, checked to belong together, and used for new
 * TLS handshakes. Established connections keep their session, so connected agents are not cut off by a renewal. A
 * pair caught half-written is skipped and retried on the next check; the previous certificate stays in use.
 */
public final class ServingCertificate implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ServingCertificate.class);

    private final File certChain;
    private final File privateKey;
    private final AdvancedTlsX509KeyManager keyManager = new AdvancedTlsX509KeyManager();
    private final ServerCredentials credentials;
    private final ScheduledFuture<?> reloading;
    // Confined to the reload task after construction.
    private long certModified;
    private long keyModified;

    /**
     * Loads the certificate chain and key now (a bad pair fails here, with the files named) and keeps checking.
     *
     * @param executor runs the reload checks
     */
    public ServingCertificate(File certChain, File privateKey, Duration reloadInterval,
                              ScheduledExecutorService executor) throws IOException {
        this.certChain = certChain;
        this.privateKey = privateKey;
        try {
            load();
        } catch (GeneralSecurityException | IOException | RuntimeException e) {
            throw new IOException("cannot load the TLS certificate " + certChain + " with key " + privateKey
                    + ": " + e.getMessage() + " (PEM certificate chain and matching PEM private key expected)", e);
        }
        this.credentials = TlsServerCredentials.newBuilder().keyManager(keyManager).build();
        this.reloading = executor.scheduleWithFixedDelay(this::reloadIfChanged, reloadInterval.toMillis(),
                reloadInterval.toMillis(), TimeUnit.MILLISECONDS);
        LOG.info("event=tls_certificate_loaded cert={} reload_interval_ms={}", certChain, reloadInterval.toMillis());
    }

    /** Server credentials that always present the latest loaded certificate. */
    public ServerCredentials credentials() {
        return credentials;
    }

    private void reloadIfChanged() {
        if (certChain.lastModified() == certModified && privateKey.lastModified() == keyModified) {
            return;
        }
        try {
            X509Certificate leaf = load();
            LOG.info("event=tls_certificate_reloaded cert={} subject=\"{}\" not_after={}", certChain,
                    leaf.getSubjectX500Principal().getName(), leaf.getNotAfter().toInstant());
        } catch (GeneralSecurityException | IOException | RuntimeException e) {
            LOG.warn("event=tls_certificate_reload_failed cert={} reason=\"{}\" action=\"keep serving the previous "
                    + "certificate; retry at the next check\"", certChain, e.getMessage());
        }
    }

    private X509Certificate load() throws IOException, GeneralSecurityException {
        long certTime = certChain.lastModified();
        long keyTime = privateKey.lastModified();
        X509Certificate[] chain;
        PrivateKey key;
        try (InputStream in = Files.newInputStream(certChain.toPath())) {
            chain = CertificateUtils.getX509Certificates(in);
        }
        try (InputStream in = Files.newInputStream(privateKey.toPath())) {
            key = CertificateUtils.getPrivateKey(in);
        }
        if (chain.length == 0) {
            throw new GeneralSecurityException("no certificate in " + certChain);
        }
        requireMatchingKey(chain[0], key);
        keyManager.updateIdentityCredentials(chain, key);
        certModified = certTime;
        keyModified = keyTime;
        return chain[0];
    }

    // A renewal writes two files; serving a key that does not match the certificate would fail every handshake.
    private static void requireMatchingKey(X509Certificate cert, PrivateKey key) throws GeneralSecurityException {
        String algorithm = switch (key.getAlgorithm()) {
            case "EC" -> "SHA256withECDSA";
            case "RSA" -> "SHA256withRSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> throw new GeneralSecurityException("unsupported key algorithm " + key.getAlgorithm());
        };
        byte[] probe = "fencing serving certificate key check".getBytes(StandardCharsets.US_ASCII);
        Signature signer = Signature.getInstance(algorithm);
        signer.initSign(key);
        signer.update(probe);
        byte[] signature = signer.sign();
        Signature verifier = Signature.getInstance(algorithm);
        verifier.initVerify(cert.getPublicKey());
        verifier.update(probe);
        if (!verifier.verify(signature)) {
            throw new GeneralSecurityException("the private key does not belong to the certificate");
        }
    }

    @Override
    public void close() {
        reloading.cancel(false);
    }
}
