package dev.fencing.nodemanager.config;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;

/**
 * Names the algorithm of a kubeconfig's client key for fabric8, which reads a key of unknown algorithm as RSA: a
 * PKCS#8 ({@code BEGIN PRIVATE KEY}) EC key, as client-go and kubectl accept it, otherwise fails the client with
 * "Invalid DER: object is not integer". The algorithm is taken from the key itself.
 */
public final class ClientKeyAlgorithm {

    private ClientKeyAlgorithm() {
    }

    /**
     * {@code config} with its client key algorithm set to the key's own (kubeconfigs have no field for it, so
     * whatever fabric8 assumed is replaced); unchanged when there is no key or its algorithm cannot be told.
     */
    public static Config apply(Config config) {
        String pem = keyPem(config);
        String algorithm = pem == null ? null : of(pem);
        return algorithm == null || algorithm.equals(config.getClientKeyAlgo()) ? config
                : new ConfigBuilder(config).withClientKeyAlgo(algorithm).build();
    }

    /** {@code RSA} or {@code EC} for a PEM private key, or null when it cannot be told. */
    static String of(String pem) {
        if (pem.contains("BEGIN EC PRIVATE KEY")) {
            return "EC";
        }
        if (pem.contains("BEGIN RSA PRIVATE KEY")) {
            return "RSA";
        }
        int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----");
        int end = pem.indexOf("-----END PRIVATE KEY-----");
        if (begin < 0 || end < begin) {
            return null;
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(pem.substring(begin + "-----BEGIN PRIVATE KEY-----".length(), end));
        } catch (IllegalArgumentException e) {
            return null;
        }
        for (String algorithm : new String[] {"RSA", "EC"}) {
            try {
                KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
                return algorithm;
            } catch (GeneralSecurityException e) {
                // not this algorithm; the next one is tried
            }
        }
        return null;
    }

    private static String keyPem(Config config) {
        if (config.getClientKeyData() != null && !config.getClientKeyData().isBlank()) {
            try {
                return new String(Base64.getMimeDecoder().decode(config.getClientKeyData()), StandardCharsets.US_ASCII);
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
        if (config.getClientKeyFile() != null && !config.getClientKeyFile().isBlank()) {
            try {
                return Files.readString(Path.of(config.getClientKeyFile()), StandardCharsets.US_ASCII);
            } catch (IOException | RuntimeException e) {
                return null;
            }
        }
        return null;
    }
}
