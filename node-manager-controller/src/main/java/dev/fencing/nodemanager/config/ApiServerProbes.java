package dev.fencing.nodemanager.config;

import com.google.protobuf.ByteString;
import dev.fencing.proto.nodemanager.v1.ApiServerProbe;
import io.fabric8.kubernetes.client.Config;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;

/**
 * The API server endpoint agents probe for the {@code APIReachable} tie-breaker ({@code GroupConfig.api_server_probe}):
 * the address and CA the controller itself uses (its fabric8 client config: master URL, CA data or CA file), the URL
 * replaceable by {@code --api-server-probe-url} when agents must reach the API server elsewhere (e.g. a load balancer
 * address on the nodes' network instead of the Service IP). APIReachable is not split-brain safe: both halves of a
 * partition may still reach the API server.
 */
public final class ApiServerProbes {

    private ApiServerProbes() {
    }

    /**
     * @param client      the controller's client configuration
     * @param overrideUrl the URL agents should use instead of the client's master URL; null or blank: the same
     * @throws UncheckedIOException when the client's CA file cannot be read
     */
    public static ApiServerProbe from(Config client, String overrideUrl) {
        String url = overrideUrl == null || overrideUrl.isBlank() ? client.getMasterUrl() : overrideUrl;
        while (url.endsWith("/")) {
            url = url.substring(0, url.length() - 1);
        }
        return ApiServerProbe.newBuilder().setUrl(url).setCaBundlePem(ByteString.copyFrom(caPem(client))).build();
    }

    // Empty when the client trusts the JVM's default CAs (or talks plain HTTP): the agent then uses its own.
    private static byte[] caPem(Config client) {
        if (client.getCaCertData() != null && !client.getCaCertData().isBlank()) {
            return Base64.getMimeDecoder().decode(client.getCaCertData());
        }
        if (client.getCaCertFile() != null && !client.getCaCertFile().isBlank()) {
            Path file = Path.of(client.getCaCertFile());
            try {
                return Files.readAllBytes(file);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the API server CA file " + file
                        + " for the APIReachable probe: " + e.getMessage(), e);
            }
        }
        return new byte[0];
    }
}
