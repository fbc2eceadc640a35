package dev.fencing.nodemanager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.nodemanager.escalation.PowerFencingSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class PowerFencingFlagsTest {

    private static Optional<PowerFencingSettings> parse(String... args) {
        NodeManagerOperator op = new NodeManagerOperator();
        new CommandLine(op).parseArgs(args);
        return op.powerFencingSettings();
    }

    @Test
    void powerFencingIsOffByDefault() {
        assertThat(parse()).isEmpty();
        assertThat(parse("--fence-agents-dir", "/opt/fence")).isEmpty();
    }

    @Test
    void powerFencingFlagsBecomeItsSettings() {
        assertThat(parse("--power-fencing")).hasValue(new PowerFencingSettings(Path.of("/usr/sbin"),
                Duration.ofSeconds(2), 4, 7410));
        assertThat(parse("--power-fencing", "--fence-agents-dir", "/opt/fence", "--power-fencing-interval", "5s"))
                .hasValue(new PowerFencingSettings(Path.of("/opt/fence"), Duration.ofSeconds(5), 4, 7410));
        assertThat(parse("--power-fencing", "--kdump-port", "-1")).hasValueSatisfying(
                s -> assertThat(s.kdumpPort()).isEqualTo(-1));
        assertThat(parse("--power-fencing")).hasValueSatisfying(
                s -> assertThat(s.recordRetention()).isEqualTo(Duration.ofDays(30)));
        assertThat(parse("--power-fencing", "--node-fencing-retention", "0")).hasValueSatisfying(
                s -> assertThat(s.recordRetention()).isZero());
        assertThatThrownBy(() -> parse("--power-fencing", "--node-fencing-retention", "-1h"))
                .isInstanceOf(CommandLine.ParameterException.class).hasMessageContaining("--node-fencing-retention");
    }

    @Test
    void aKdumpPortOutOfRangeIsRefusedNamingTheFlag() {
        assertThatThrownBy(() -> parse("--power-fencing", "--kdump-port", "70000"))
                .isInstanceOf(CommandLine.ParameterException.class).hasMessageContaining("--kdump-port");
    }

    @Test
    void aZeroIntervalIsRefusedNamingTheFlag() {
        assertThatThrownBy(() -> parse("--power-fencing", "--power-fencing-interval", "0s"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("--power-fencing-interval");
    }
}
