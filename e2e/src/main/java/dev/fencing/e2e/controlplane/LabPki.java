package dev.fencing.e2e.controlplane;

import dev.fencing.e2e.process.HostCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The lab's certificate authority and the controller's serving certificate, made with the host's {@code openssl}
 * like an operator would by hand: a CA ({@code ca.crt}) and a P-256 serving certificate ({@code tls.crt},
 * {@code tls.key}) valid for the controller's Service name and its lab address, for one day.
 *
 * @param dir where the files are
 */
record LabPki(Path dir) {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** Creates the files in {@code dir}. */
    static LabPki create(Path dir, String serverName, String address) {
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("san.ext"), "subjectAltName=DNS:" + serverName + ",IP:" + address + "\n"
                    + "extendedKeyUsage=serverAuth\n");
        } catch (IOException e) {
            throw new IllegalStateException("cannot prepare " + dir + ": " + e.getMessage(), e);
        }
        String d = dir.toString();
        HostCommand.check(List.of("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:P-256", "-nodes", "-keyout", d + "/ca.key", "-out", d + "/ca.crt", "-days", "1",
                "-subj", "/CN=fencing-lab-ca"), TIMEOUT);
        HostCommand.check(List.of("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", "-keyout", d + "/tls.key", "-out", d + "/tls.csr", "-subj", "/CN=" + serverName), TIMEOUT);
        HostCommand.check(List.of("openssl", "x509", "-req", "-in", d + "/tls.csr", "-CA", d + "/ca.crt",
                "-CAkey", d + "/ca.key", "-CAcreateserial", "-out", d + "/tls.crt", "-days", "1",
                "-extfile", d + "/san.ext"), TIMEOUT);
        return new LabPki(dir);
    }

    Path ca() {
        return dir.resolve("ca.crt");
    }

    Path cert() {
        return dir.resolve("tls.crt");
    }

    Path key() {
        return dir.resolve("tls.key");
    }
}
