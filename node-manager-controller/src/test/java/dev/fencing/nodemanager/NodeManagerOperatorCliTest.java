package dev.fencing.nodemanager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.nodemanager.config.AgentPodSettings;
import dev.fencing.nodemanager.config.ControllerConfig;
import dev.fencing.nodemanager.config.LeaderElectionTimings;
import dev.fencing.nodemanager.status.NodeGroupStatusTarget;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class NodeManagerOperatorCliTest {

    private static final String[] TLS = {"--tls-cert", "/tls/tls.crt", "--tls-key", "/tls/tls.key",
        "--agent-ca-secret", "fencing-ca"};

    // With the TLS flags every production install passes.
    private static ControllerConfig parse(String... args) {
        String[] all = java.util.stream.Stream.concat(java.util.Arrays.stream(TLS), java.util.Arrays.stream(args))
                .toArray(String[]::new);
        return parseExactly(all);
    }

    private static ControllerConfig parseExactly(String... args) {
        NodeManagerOperator op = new NodeManagerOperator();
        new CommandLine(op).parseArgs(args);
        return op.config();
    }

    @Test
    void withoutACertificateTheControllerRefusesToStartUnlessPlaintextIsExplicit() {
        assertThatThrownBy(() -> parseExactly("--agent-ca-secret", "ca"))
                .hasMessageContaining("TLS only").hasMessageContaining("--insecure-plaintext");
        assertThatThrownBy(() -> parseExactly("--tls-cert", "/c", "--tls-key", "/k"))
                .hasMessageContaining("--agent-ca-secret is required");
        ControllerConfig plain = parseExactly("--insecure-plaintext");
        assertThat(plain.security().insecurePlaintext()).isTrue();
        assertThat(plain.tlsCert()).isNull();
    }

    @Test
    void tlsFlagsBecomeTheChannelSecurity() {
        ControllerConfig c = parse("--tls-ca", "/tls/ca.crt", "--agent-service-account", "fencing-agent",
                "--tls-reload-interval", "10s");
        assertThat(c.security().insecurePlaintext()).isFalse();
        assertThat(c.security().agentCaSecret()).isEqualTo("fencing-ca");
        assertThat(c.security().agentServiceAccount()).isEqualTo("fencing-agent");
        assertThat(c.security().tlsCa()).hasToString("/tls/ca.crt");
        assertThat(c.security().certReloadInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(c.serverName()).isEqualTo("node-manager-controller.kube-system.svc");
    }

    /**
     * The agents must tolerate the out-of-service taint the controller puts on a fenced node: an agent evicted by it
     * cannot report the node's return, so the taint would stay for good.
     */
    @Test
    void agentTolerationsThatDoNotTolerateTheOutOfServiceTaintAreRefused() {
        assertThatThrownBy(() -> parse("--agent-toleration", "node-role.kubernetes.io/control-plane:NoSchedule"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("must tolerate node.kubernetes.io/out-of-service:NoExecute");
        assertThatThrownBy(() -> parse("--agent-toleration", "node.kubernetes.io/out-of-service:NoSchedule"))
                .isInstanceOf(CommandLine.ParameterException.class);
        assertThat(parse("--agent-toleration", "node.kubernetes.io/out-of-service").agentTolerations()).hasSize(1);
        assertThat(parse("--agent-toleration", "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute")
                .agentTolerations()).hasSize(1);
        assertThat(parse().agentTolerations()).singleElement()
                .satisfies(t -> assertThat(t.getOperator()).isEqualTo("Exists"));
    }

    @Test
    void theProbePortIsItsOwnAndOnlyAPortOrOff() {
        NodeManagerOperator op = new NodeManagerOperator();
        new CommandLine(op).parseArgs();
        assertThat(op.probePort()).isEqualTo(8081);
        for (String[] bad : List.of(new String[] {"--probe-port", "-2"}, new String[] {"--probe-port", "65536"},
                new String[] {"--probe-port", "8080"}, new String[] {"--probe-port", "7000", "--grpc-port", "7000"})) {
            NodeManagerOperator o = new NodeManagerOperator();
            new CommandLine(o).parseArgs(bad);
            assertThatThrownBy(o::probePort).as(String.join(" ", bad))
                    .isInstanceOf(CommandLine.ParameterException.class).hasMessageStartingWith("--probe-port ");
        }
        NodeManagerOperator off = new NodeManagerOperator();
        new CommandLine(off).parseArgs("--probe-port", "-1");
        assertThat(off.probePort()).isEqualTo(-1);
    }

    @Test
    void flagsBecomeTheControllerConfig() {
        ControllerConfig c = parse("--namespace", "d8-fencing", "--grpc-port", "9999", "--gossip-port", "8500",
                "--agent-image", "img:1", "--no-leader-election", "--agent-resource", "requests.cpu=20m",
                "--agent-toleration", "node-role.kubernetes.io/control-plane:NoSchedule,dedicated=db:NoExecute,"
                        + "node.kubernetes.io/out-of-service:NoExecute",
                "--status-interval", "5s", "--max-tie-lease", "20s");
        assertThat(c.namespace()).isEqualTo("d8-fencing");
        assertThat(c.grpcPort()).isEqualTo(9999);
        assertThat(c.gossipPort()).isEqualTo(8500);
        assertThat(c.agentImage()).isEqualTo("img:1");
        assertThat(c.leaderElection()).isFalse();
        assertThat(c.agentControllerAddress()).isEqualTo("node-manager-controller.d8-fencing.svc:9999");
        assertThat(c.agentResources()).containsExactlyEntriesOf(java.util.Map.of("requests.cpu", "20m"));
        assertThat(c.agentTolerations()).hasSize(3);
        assertThat(c.agentTolerations().get(0).getOperator()).isEqualTo("Exists");
        assertThat(c.agentTolerations().get(1).getValue()).isEqualTo("db");
        assertThat(c.statusInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.maxTieLease()).isEqualTo(Duration.ofSeconds(20));
    }

    @Test
    void leaderElectionTimingsDefaultToJosdksAndAreValidated() {
        assertThat(timings()).isEqualTo(LeaderElectionTimings.DEFAULTS);
        assertThat(timings("--leader-lease-duration", "4s", "--leader-renew-deadline", "3s",
                "--leader-retry-period", "500ms"))
                .isEqualTo(new LeaderElectionTimings(Duration.ofSeconds(4), Duration.ofSeconds(3),
                        Duration.ofMillis(500)));
        assertThatThrownBy(() -> timings("--leader-lease-duration", "4s", "--leader-renew-deadline", "4s"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("--leader-renew-deadline 4s must be shorter than --leader-lease-duration 4s");
        assertThatThrownBy(() -> timings("--leader-lease-duration", "4s", "--leader-renew-deadline", "3s",
                "--leader-retry-period", "2600ms"))
                .hasMessageContaining("--leader-retry-period 2.6s must be shorter than --leader-renew-deadline");
        assertThatThrownBy(() -> timings("--leader-lease-duration", "soon"))
                .hasMessageContaining("--leader-lease-duration soon");
    }

    private static LeaderElectionTimings timings(String... args) {
        NodeManagerOperator op = new NodeManagerOperator();
        new CommandLine(op).parseArgs(args);
        return op.electionTimings();
    }

    @Test
    void defaultsLeadOnALeaseAndTolerateEverything() {
        ControllerConfig c = parse();
        assertThat(c.leaderElection()).isTrue();
        assertThat(c.gossipPort()).as("clear of MetalLB's 7946 and Deckhouse's agent's 8500").isEqualTo(9651);
        assertThat(c.agentPod()).isEqualTo(new AgentPodSettings(9652, "", List.of()));
        assertThat(c.agentTolerations().get(0).getOperator()).isEqualTo("Exists");
    }

    @Test
    void agentPodFlagsSetTheMetricsPortAndImagePulling() {
        ControllerConfig c = parse("--agent-metrics-port", "9700", "--agent-image-pull-policy", "Always",
                "--agent-image-pull-secret", "regcred", "--agent-image-pull-secret", "mirror,backup");
        assertThat(c.agentPod()).isEqualTo(new AgentPodSettings(9700, "Always", List.of("regcred", "mirror",
                "backup")));
        assertThat(parse("--agent-metrics-port", "0").agentPod().metricsPort()).as("off").isZero();
    }

    @Test
    void badAgentPodFlagsStopTheControllerNamingTheFlag() {
        assertThatThrownBy(() -> parse("--agent-metrics-port", "70000"))
                .isInstanceOf(CommandLine.ParameterException.class).hasMessageContaining("--agent-metrics-port 70000");
        assertThatThrownBy(() -> parse("--agent-image-pull-policy", "always"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("--agent-image-pull-policy always: expected Always, IfNotPresent or Never");
        assertThatThrownBy(() -> parse("--agent-image-pull-secret", "-bad"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("--agent-image-pull-secret -bad");
        assertThatThrownBy(() -> parse("--agent-metrics-port", "8500", "--gossip-port", "8500"))
                .hasMessageContaining("--agent-metrics-port 8500 is the gossip port");
    }

    /** Where group status goes: auto unless told, any case; anything else is refused before connecting. */
    @Test
    void nodeGroupStatusIsAutoUnlessGiven() {
        assertThat(mode()).isEqualTo(NodeGroupStatusTarget.Mode.AUTO);
        assertThat(mode("--nodegroup-status", "off")).isEqualTo(NodeGroupStatusTarget.Mode.OFF);
        assertThat(mode("--nodegroup-status=Write")).isEqualTo(NodeGroupStatusTarget.Mode.WRITE);
        assertThatThrownBy(() -> mode("--nodegroup-status", "never"))
                .hasMessage("--nodegroup-status must be auto, write or off, not \"never\"");
    }

    private static NodeGroupStatusTarget.Mode mode(String... args) {
        NodeManagerOperator op = new NodeManagerOperator();
        new CommandLine(op).parseArgs(java.util.stream.Stream.concat(java.util.Arrays.stream(TLS),
                java.util.Arrays.stream(args)).toArray(String[]::new));
        return op.nodeGroupStatusMode();
    }

    /** Production writes with server-side apply; the switch exists for API servers without it (the CRUD mock). */
    @Test
    void serverSideApplyIsOnUnlessSwitchedOff() {
        assertThat(parse().serverSideApply()).isTrue();
        assertThat(parse("--no-server-side-apply").serverSideApply()).isFalse();
        assertThat(parse("--server-side-apply").serverSideApply()).isTrue();
        assertThat(ControllerConfig.forTests("ns").serverSideApply()).as("the CRUD mock has no SSA").isFalse();
        assertThat(ControllerConfig.forTests("ns").withServerSideApply(true).serverSideApply()).isTrue();
    }

    @Test
    void theApiReachableProbeUrlCanBeOverriddenAndMustBeAnHttpUrl() {
        assertThat(parse().apiServerProbeUrl()).isNull();
        assertThat(parse("--api-server-probe-url", "https://10.0.0.1:6443").apiServerProbeUrl())
                .isEqualTo("https://10.0.0.1:6443");
        assertThatThrownBy(() -> parse("--api-server-probe-url", "10.0.0.1:6443"))
                .hasMessageContaining("--api-server-probe-url 10.0.0.1:6443");
    }

    @Test
    void aMalformedResourceOrDurationSaysWhichFlag() {
        assertThatThrownBy(() -> parse("--agent-resource", "cpu=10m"))
                .hasMessageContaining("--agent-resource cpu=10m");
        assertThatThrownBy(() -> parse("--status-interval", "soon")).hasMessageContaining("--status-interval soon");
    }

    @Test
    void agentLogFlagsBecomeTheAgentPodSettings() {
        ControllerConfig c = parse("--agent-log-level", "warn,dev.fencing.memberlist=debug", "--agent-log-format",
                "JSON");
        assertThat(c.agentPod().logLevels()).containsExactly("warn", "dev.fencing.memberlist=debug");
        assertThat(c.agentPod().logFormat()).isEqualTo("JSON");
        assertThat(parse().agentPod().logLevels()).isEmpty();
        assertThat(parse().agentPod().logFormat()).isEmpty();
    }

    @Test
    void badLogFlagsExitWithCode2NamingTheFlag() {
        assertThat(stderrOf("--insecure-plaintext", "--log-level", "chatty"))
                .contains("--log-level chatty: expected one of error|warn|info|debug|trace");
        assertThat(stderrOf("--insecure-plaintext", "--log-format", "yaml"))
                .contains("--log-format yaml: expected text or json");
        assertThat(stderrOf("--insecure-plaintext", "--agent-log-format", "yaml"))
                .contains("--agent-log-format yaml: expected text or json");
    }

    /** Runs the controller's command line, which must exit with 2 before it starts; returns what went to stderr. */
    private static String stderrOf(String... args) {
        // the ParameterExceptions name their own CommandLine, which prints to System.err
        java.io.PrintStream saved = System.err;
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            assertThat(new CommandLine(new NodeManagerOperator()).execute(args)).isEqualTo(2);
        } finally {
            System.setErr(saved);
        }
        return err.toString(java.nio.charset.StandardCharsets.UTF_8);
    }
}
