package dev.fencing.nodemanager.grpc.auth;

import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.util.AdvancedTlsX509KeyManager;
import java.io.File;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The AgentControl serving certificate, reloaded from its PEM files without a restart: every
 * {@code reloadInterval} the files are checked and, when changed (a renewed Secret mounted by the kubelet, a
 * cert-manager renewal), new TLS handshakes use the new certificate. Established connections keep theirs, so
 * connected agents are not cut off by a renewal.
 */
public final class ServingCertificate implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ServingCertificate.class);

    private final AdvancedTlsX509KeyManager keyManager = new AdvancedTlsX509KeyManager();
    private final AdvancedTlsX509KeyManager.Closeable reloading;
    private final ServerCredentials credentials;

    /**
     * Loads the certificate chain and key now (a bad file fails here, with the file named) and keeps reloading.
     *
     * @param executor runs the reload checks
     */
    public ServingCertificate(File certChain, File privateKey, Duration reloadInterval,
                              ScheduledExecutorService executor) throws IOException {
        try {
            keyManager.updateIdentityCredentials(certChain, privateKey);
            this.reloading = keyManager.updateIdentityCredentials(certChain, privateKey,
                    reloadInterval.toMillis(), TimeUnit.MILLISECONDS, executor);
        } catch (GeneralSecurityException | IOException | RuntimeException e) {
            throw new IOException("cannot load the TLS certificate " + certChain + " with key " + privateKey
                    + ": " + e.getMessage() + " (PEM certificate chain and PEM PKCS#8/PKCS#1 key expected)", e);
        }
        this.credentials = TlsServerCredentials.newBuilder().keyManager(keyManager).build();
        LOG.info("event=tls_certificate_loaded cert={} reload_interval_ms={}", certChain, reloadInterval.toMillis());
    }

    /** Server credentials that always present the latest loaded certificate. */
    public ServerCredentials credentials() {
        return credentials;
    }

    @Override
    public void close() {
        reloading.close();
    }
}
