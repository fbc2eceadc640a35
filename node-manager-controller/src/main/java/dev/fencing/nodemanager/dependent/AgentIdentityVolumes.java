package dev.fencing.nodemanager.dependent;

import dev.fencing.nodemanager.config.AgentControlSecurity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What an agent pod needs to reach the controller securely: its projected ServiceAccount token (audience
 * {@code fencing-agent}, one hour, rotated by the kubelet and re-read by the agent on every connect) and the CA
 * bundle it verifies the controller's certificate with, plus the matching {@code run} flags.
 */
final class AgentIdentityVolumes {

    /** Lifetime the kubelet requests for the agent token; it rotates it at 80%. */
    static final long TOKEN_EXPIRATION_SECONDS = 3600;
    private static final String TOKEN_VOLUME = "agent-token";
    private static final String CA_VOLUME = "controller-ca";

    private AgentIdentityVolumes() {
    }

    static List<Volume> volumes(AgentControlSecurity security) {
        List<Volume> volumes = new ArrayList<>();
        volumes.add(new VolumeBuilder().withName(TOKEN_VOLUME).withNewProjected().addNewSource()
                .withNewServiceAccountToken().withAudience("fencing-agent")
                .withExpirationSeconds(TOKEN_EXPIRATION_SECONDS).withPath(fileName(AgentControlSecurity.AGENT_TOKEN_FILE))
                .endServiceAccountToken().endSource().endProjected().build());
        if (!security.agentCaSecret().isEmpty()) {
            volumes.add(new VolumeBuilder().withName(CA_VOLUME).withNewSecret()
                    .withSecretName(security.agentCaSecret())
                    .addNewItem().withKey("ca.crt").withPath(fileName(AgentControlSecurity.AGENT_CA_FILE)).endItem()
                    .endSecret().build());
        }
        return volumes;
    }

    static List<VolumeMount> mounts(AgentControlSecurity security) {
        List<VolumeMount> mounts = new ArrayList<>();
        mounts.add(new VolumeMountBuilder().withName(TOKEN_VOLUME).withReadOnly(true)
                .withMountPath(directory(AgentControlSecurity.AGENT_TOKEN_FILE)).build());
        if (!security.agentCaSecret().isEmpty()) {
            mounts.add(new VolumeMountBuilder().withName(CA_VOLUME).withReadOnly(true)
                    .withMountPath(directory(AgentControlSecurity.AGENT_CA_FILE)).build());
        }
        return mounts;
    }

    static List<String> args(AgentControlSecurity security) {
        List<String> args = new ArrayList<>(List.of("--token-file", AgentControlSecurity.AGENT_TOKEN_FILE));
        if (security.insecurePlaintext()) {
            args.add("--insecure-plaintext");
        } else if (!security.agentCaSecret().isEmpty()) {
            args.addAll(List.of("--controller-ca", AgentControlSecurity.AGENT_CA_FILE));
        }
        return args;
    }

    private static String fileName(String path) {
        return Path.of(path).getFileName().toString();
    }

    private static String directory(String path) {
        return Path.of(path).getParent().toString();
    }
}
