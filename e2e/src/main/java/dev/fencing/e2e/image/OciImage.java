package dev.fencing.e2e.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fencing.e2e.peer.ProjectLayout;
import dev.fencing.e2e.process.HostCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * An OCI image-layout archive built by {@code scripts/images} ({@code target/images/<name>.oci.tar}, tagged through
 * the index annotation {@code org.opencontainers.image.ref.name}).
 *
 * @param archive the archive
 * @param tag     the tag inside it
 */
public record OciImage(Path archive, String tag) {

    /** The tag scripts/images gives both images: the chart's appVersion. */
    public static final String TAG = "0.1.0";
    private static final Duration UNPACK_TIMEOUT = Duration.ofMinutes(3);
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * @param name {@code fencing-agent} or {@code node-manager-controller}
     * @return {@code target/images/<name>.oci.tar}
     * @throws IllegalStateException when it was not built, saying how to build it
     */
    public static OciImage locate(ProjectLayout layout, String name) {
        Path archive = layout.repoRoot().resolve("target").resolve("images").resolve(name + ".oci.tar");
        if (!Files.isRegularFile(archive)) {
            throw new IllegalStateException(archive + " is missing; build the images first: scripts/images "
                    + "(scripts/test does it before Maven)");
        }
        return new OciImage(archive, TAG);
    }

    /**
     * Extracts the archive into {@code dir/layout} and unpacks the tagged image with umoci into {@code dir/bundle}
     * (root filesystem and a runtime config from the image config, which gives entrypoint, user and environment).
     *
     * @throws IllegalStateException when tar or umoci fails
     */
    public UnpackedImage unpack(Path dir) {
        Path layout = dir.resolve("layout");
        Path bundle = dir.resolve("bundle");
        try {
            Files.createDirectories(layout);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create " + layout + ": " + e.getMessage(), e);
        }
        HostCommand.check(List.of("tar", "-xf", archive.toString(), "-C", layout.toString()), UNPACK_TIMEOUT);
        HostCommand.check(List.of("umoci", "unpack", "--image", layout + ":" + tag, bundle.toString()),
                UNPACK_TIMEOUT);
        try {
            JsonNode process = JSON.readTree(bundle.resolve("config.json").toFile()).path("process");
            List<String> args = new ArrayList<>();
            process.path("args").forEach(a -> args.add(a.asText()));
            List<String> env = new ArrayList<>();
            process.path("env").forEach(e -> env.add(e.asText()));
            return new UnpackedImage(bundle.resolve("rootfs"), args, env, process.path("user").path("uid").asInt(),
                    process.path("user").path("gid").asInt());
        } catch (IOException e) {
            throw new IllegalStateException("cannot read umoci's config of " + archive + ": " + e.getMessage(), e);
        }
    }
}
