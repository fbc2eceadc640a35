package dev.fencing.agent.control;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Executor;

/**
 * The agent's identity on AgentControl: its projected ServiceAccount token (audience {@code fencing-agent}), read
 * from the file on every call, because the kubelet rotates the file well before the token expires and the agent
 * opens one call per connect. The token is sent as {@code authorization: Bearer …} and never logged. An unreadable
 * or empty file fails the call with {@code UNAUTHENTICATED} naming the file; the client retries with backoff.
 */
public final class ServiceAccountTokenCredentials extends CallCredentials {

    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization",
            Metadata.ASCII_STRING_MARSHALLER);
    /** A projected token is a few KiB; anything much larger is not one. */
    private static final long MAX_TOKEN_BYTES = 64 * 1024;

    private final Path tokenFile;

    public ServiceAccountTokenCredentials(Path tokenFile) {
        this.tokenFile = tokenFile;
    }

    @Override
    public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
        executor.execute(() -> {
            String token;
            try {
                token = read();
            } catch (IOException e) {
                applier.fail(Status.UNAUTHENTICATED.withDescription("cannot read the agent token " + tokenFile
                        + ": " + e.getMessage() + " (the DaemonSet mounts a projected serviceAccountToken with "
                        + "audience fencing-agent there; --token-file)"));
                return;
            }
            Metadata headers = new Metadata();
            headers.put(AUTHORIZATION, "Bearer " + token);
            applier.apply(headers);
        });
    }

    private String read() throws IOException {
        if (Files.size(tokenFile) > MAX_TOKEN_BYTES) {
            throw new IOException("larger than " + MAX_TOKEN_BYTES + " bytes");
        }
        String token = Files.readString(tokenFile, StandardCharsets.US_ASCII).trim();
        if (token.isEmpty()) {
            throw new IOException("the file is empty");
        }
        if (!token.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw new IOException("not a token (contains whitespace or non-ASCII characters)");
        }
        return token;
    }

    @Override
    public String toString() {
        return "ServiceAccountTokenCredentials[file=" + tokenFile + "]";
    }
}
