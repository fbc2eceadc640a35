package dev.fencing.agent.apiserver;

import dev.fencing.proto.nodemanager.v1.ApiServerProbe;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * Where the {@code APIReachable} tie-breaker probes the Kubernetes API server: {@code GET <url>/readyz} over HTTPS,
 * verified against a CA bundle.
 *
 * @param url the API server's base URL, e.g. {@code https://10.96.0.1:443}
 * @param caPem the PEM CA bundle, when given inline (the controller sends the one it uses)
 * @param caFile the CA bundle file read when {@code caPem} is empty (default: the pod's service-account CA)
 */
public record ApiServerEndpoint(URI url, Optional<String> caPem, Path caFile) {

  /** The service-account CA every pod gets; what the API server's certificate is signed with in-cluster. */
  public static final Path SERVICE_ACCOUNT_CA = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");

  public ApiServerEndpoint {
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(caPem, "caPem");
    Objects.requireNonNull(caFile, "caFile");
    if (!"https".equals(url.getScheme()) || url.getHost() == null) {
      throw new IllegalArgumentException("API server URL '" + url + "' must be https://host[:port]");
    }
  }

  /**
   * Parses a base URL.
   *
   * @throws IllegalArgumentException saying what is wrong
   */
  public static URI parseUrl(String url) {
    try {
      return new URI(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("API server URL '" + url + "' is not a URL: " + e.getMessage());
    }
  }

  /**
   * The endpoint a controller's {@code GroupConfig.api_server_probe} names; empty when absent (then APIReachable
   * never answers).
   *
   * @throws IllegalArgumentException when the URL is not https://host[:port]
   */
  public static Optional<ApiServerEndpoint> fromProto(boolean present, ApiServerProbe probe) {
    if (!present || probe.getUrl().isEmpty()) {
      return Optional.empty();
    }
    Optional<String> pem = probe.getCaBundlePem().isEmpty() ? Optional.empty()
        : Optional.of(probe.getCaBundlePem().toString(StandardCharsets.UTF_8));
    return Optional.of(new ApiServerEndpoint(parseUrl(probe.getUrl()), pem, SERVICE_ACCOUNT_CA));
  }

  /** {@code <url>/readyz}. */
  public URI readyz() {
    return URI.create(url + "/readyz");
  }
}
