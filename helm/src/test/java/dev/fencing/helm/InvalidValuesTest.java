package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import org.junit.jupiter.api.Test;

class InvalidValuesTest {

    @Test
    void zeroReplicasAreRejectedBySchema() {
        assertThatThrownBy(() -> FencingChart.render("controller.replicas", 0))
                .hasMessageContaining("/controller/replicas").hasMessageContaining("minimum");
    }

    @Test
    void severalReplicasWithoutLeaderElectionAreRefusedBecauseEachWouldGrantTies() {
        assertThatThrownBy(() -> FencingChart.renderWithValues("""
                controller:
                  replicas: 2
                  leaderElection:
                    enabled: false
                """)).hasMessageContaining("controller.replicas=2 with controller.leaderElection.enabled=false")
                .hasMessageContaining("set controller.replicas=1 or enable leader election");
        assertThat(FencingChart.renderWithValues("""
                controller:
                  replicas: 1
                  leaderElection:
                    enabled: false
                """).one(Deployment.class).getSpec().getReplicas()).isEqualTo(1);
    }

    @Test
    void unknownLogLevelsAndFormatsAreRejectedBySchema() {
        assertThatThrownBy(() -> FencingChart.render("controller.logLevel", "verbose"))
                .hasMessageContaining("/controller/logLevel");
        assertThatThrownBy(() -> FencingChart.render("controller.logFormat", "xml"))
                .hasMessageContaining("/controller/logFormat");
        assertThatThrownBy(() -> FencingChart.render("agent.logLevel", "info,dev.fencing=loud"))
                .hasMessageContaining("/agent/logLevel");
        assertThatThrownBy(() -> FencingChart.render("agent.logFormat", "yaml"))
                .hasMessageContaining("/agent/logFormat");
    }

    @Test
    void anEmptyImageRepositoryIsRejected() {
        assertThatThrownBy(() -> FencingChart.render("controller.image.repository", ""))
                .hasMessageContaining("/controller/image/repository");
        assertThatThrownBy(() -> FencingChart.render("agent.image.repository", ""))
                .hasMessageContaining("/agent/image/repository");
    }

    @Test
    void removingAnImageIsRejected() {
        assertThatThrownBy(() -> FencingChart.renderWithValues("""
                controller:
                  image: null
                """)).hasMessageContaining("at '/controller': missing property 'image'");
        assertThatThrownBy(() -> FencingChart.renderWithValues("""
                agent:
                  image:
                    repository: null
                """)).hasMessageContaining("at '/agent/image': missing property 'repository'");
    }

    @Test
    void anImageDigestMustBeASha256() {
        assertThatThrownBy(() -> FencingChart.render("agent.image.digest", "latest"))
                .hasMessageContaining("/agent/image/digest");
    }

    @Test
    void bringYourOwnSecretModeWithoutASecretNameIsRejected() {
        assertThatThrownBy(() -> FencingChart.render("tls.mode", "secret"))
                .hasMessageContaining("/tls/secretName");
    }

    @Test
    void aMisspelledKeyIsRejectedInsteadOfIgnored() {
        assertThatThrownBy(() -> FencingChart.render("crd.install", true))
                .hasMessageContaining("additional properties 'crd' not allowed");
        assertThatThrownBy(() -> FencingChart.render("controller.replica", 3))
                .hasMessageContaining("additional properties 'replica' not allowed");
    }

    @Test
    void outOfRangePortsAndMalformedDurationsAreRejected() {
        assertThatThrownBy(() -> FencingChart.render("agent.gossipPort", 70000))
                .hasMessageContaining("/agent/gossipPort");
        assertThatThrownBy(() -> FencingChart.render("controller.ports.grpc", 0))
                .hasMessageContaining("/controller/ports/grpc");
        assertThatThrownBy(() -> FencingChart.render("controller.statusInterval", "ten seconds"))
                .hasMessageContaining("/controller/statusInterval");
    }

    @Test
    void agentTolerationsTheControllerCannotExpressFailWithTheIndexAndTheReason() {
        assertThatThrownBy(() -> FencingChart.renderWithValues("""
                agent:
                  tolerations:
                    - operator: Exists
                    - key: node.kubernetes.io/unreachable
                      operator: Exists
                      effect: NoExecute
                      tolerationSeconds: 300
                """)).hasMessageContaining("agent.tolerations[1]: tolerationSeconds is not supported");
        assertThatThrownBy(() -> FencingChart.renderWithValues("""
                agent:
                  tolerations:
                    - operator: Exists
                      effect: NoSchedule
                """)).hasMessageContaining("agent.tolerations[0]").hasMessageContaining("without a key");
        assertThatThrownBy(() -> FencingChart.renderWithValues("""
                agent:
                  tolerations:
                    - operator: Equal
                      value: x
                """)).hasMessageContaining("agent.tolerations[0]: operator Equal needs a key");
    }

    @Test
    void aValueContainingTheFlagSeparatorIsRejected() {
        assertThatThrownBy(() -> FencingChart.renderWithValues("""
                agent:
                  tolerations:
                    - key: a
                      value: "b,c"
                """)).hasMessageContaining("must not contain a comma");
    }

    @Test
    void anExistingServiceAccountMustBeNamed() {
        assertThatThrownBy(() -> FencingChart.render("serviceAccount.create", false))
                .hasMessageContaining("serviceAccount.name is required");
    }

    @Test
    void clustersOlderThanTheChartsKubeVersionAreRejected() {
        assertThatThrownBy(() -> FencingChart.templateForKubeVersion("1.24.0"))
                .hasMessageContaining("requires kubeVersion");
    }

    @Test
    void agentPortsOutsideTheirRangeOrSharedAreRejectedNamingTheKey() {
        assertThatThrownBy(() -> FencingChart.render("agent.metricsPort", 65536))
                .hasMessageContaining("/agent/metricsPort").hasMessageContaining("maximum");
        assertThatThrownBy(() -> FencingChart.render("agent.metricsPort", -1))
                .hasMessageContaining("/agent/metricsPort").hasMessageContaining("minimum");
        assertThatThrownBy(() -> FencingChart.render("agent.metricsPort", 9651))
                .hasMessageContaining("agent.metricsPort=9651 equals agent.gossipPort");
        assertThatThrownBy(() -> FencingChart.render("agent.probePort", 9652))
                .hasMessageContaining("agent.probePort=9652 equals agent.gossipPort or agent.metricsPort");
        assertThatThrownBy(() -> FencingChart.render("agent.probePort", 9651))
                .hasMessageContaining("agent.probePort=9651 equals");
        assertThatThrownBy(() -> FencingChart.render("agent.probePort", 65536))
                .hasMessageContaining("/agent/probePort").hasMessageContaining("maximum");
    }

    @Test
    void anUnknownAgentPullPolicyOrAMalformedPullSecretIsRejected() {
        assertThatThrownBy(() -> FencingChart.render("agent.image.pullPolicy", "always"))
                .hasMessageContaining("/agent/image/pullPolicy");
        assertThatThrownBy(() -> FencingChart.renderWithValues("""
                agent:
                  imagePullSecrets:
                    - name: Reg_Cred
                """)).hasMessageContaining("/agent/imagePullSecrets/0/name");
        assertThatThrownBy(() -> FencingChart.renderWithValues("""
                agent:
                  imagePullSecrets:
                    - regcred
                """)).hasMessageContaining("/agent/imagePullSecrets/0");
    }
}
