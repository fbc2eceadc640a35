package dev.fencing.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class LogSetupTest {

    private static final String TIMESTAMP = "\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z";

    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
    private PrintStream stderr;

    @BeforeEach
    void captureStderr() {
        stderr = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restore() {
        System.setErr(stderr);
        LogSetup.configure(LogLevels.INFO, LogFormat.TEXT, Map.of());
    }

    private List<String> lines() {
        return captured.toString(StandardCharsets.UTF_8).lines().toList();
    }

    private static Map<String, String> nodeAndGroup(String group) {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("node", "n1");
        fields.put("group", group);
        return fields;
    }

    @Test
    void textLinesCarryTimestampLevelThreadLoggerAndContextFields() {
        LogSetup.configure(LogLevels.INFO, LogFormat.TEXT, nodeAndGroup("workers"));
        LoggerFactory.getLogger("dev.fencing.test").info("event=armed peers=2");

        assertThat(lines()).singleElement().asString().matches(TIMESTAMP
                + " INFO  \\[" + Thread.currentThread().getName() + "\\] dev\\.fencing\\.test node=n1 group=workers"
                + " - event=armed peers=2");
    }

    @Test
    void textLeavesOutAFieldTheMessageAlreadyCarries() {
        LogSetup.configure(LogLevels.INFO, LogFormat.TEXT, nodeAndGroup("workers"));
        LoggerFactory.getLogger("dev.fencing.test").info("event=joined node=n2");

        assertThat(lines()).singleElement().asString()
                .endsWith("dev.fencing.test group=workers - event=joined node=n2");
    }

    @Test
    void aFieldWithoutValueShowsOnceItIsSet() {
        LogSetup.configure(LogLevels.INFO, LogFormat.TEXT, nodeAndGroup(null));
        Logger log = LoggerFactory.getLogger("dev.fencing.test");
        log.info("before");
        LogSetup.putField("group", "masters");
        log.info("after");

        assertThat(lines()).hasSize(2);
        assertThat(lines().get(0)).contains(" node=n1 - before").doesNotContain("group=");
        assertThat(lines().get(1)).contains(" node=n1 group=masters - after");
    }

    @Test
    void jsonLinesAreObjectsWithTheContextFieldsAsMembers() throws Exception {
        LogSetup.configure(LogLevels.INFO, LogFormat.JSON, nodeAndGroup("workers"));
        LoggerFactory.getLogger("dev.fencing.test").warn("event=\"quoted\"\nsecond line node=n1");

        assertThat(lines()).hasSize(1);
        JsonNode line = new ObjectMapper().readTree(lines().get(0));
        assertThat(line.get("ts").asText()).matches(TIMESTAMP);
        assertThat(line.get("level").asText()).isEqualTo("WARN");
        assertThat(line.get("thread").asText()).isEqualTo(Thread.currentThread().getName());
        assertThat(line.get("logger").asText()).isEqualTo("dev.fencing.test");
        assertThat(line.get("node").asText()).isEqualTo("n1");
        assertThat(line.get("group").asText()).isEqualTo("workers");
        assertThat(line.get("msg").asText()).isEqualTo("event=\"quoted\"\nsecond line node=n1");
    }

    @Test
    void rootAndPerLoggerLevelsFilterLines() {
        LogSetup.configure(LogLevels.parse(List.of("warn", "dev.fencing.memberlist=debug")), LogFormat.TEXT,
                Map.of());
        LoggerFactory.getLogger("dev.fencing.agent.X").info("hidden");
        LoggerFactory.getLogger("dev.fencing.agent.X").warn("shown-warn");
        LoggerFactory.getLogger("dev.fencing.memberlist.Y").debug("shown-debug");
        LoggerFactory.getLogger("dev.fencing.memberlist.Y").trace("hidden-trace");

        assertThat(lines()).hasSize(2);
        assertThat(lines().get(0)).endsWith(" - shown-warn");
        assertThat(lines().get(1)).endsWith(" - shown-debug");
    }

    @Test
    void beforeAMainConfiguresLoggingOnlyWarningsReachStderrAndNothingReachesStdout() {
        PrintStream stdout = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            new QuietDefaultConfigurator().configure((ch.qos.logback.classic.LoggerContext)
                    LoggerFactory.getILoggerFactory());
            Logger log = LoggerFactory.getLogger("dev.fencing.test");
            log.info("hidden");
            log.warn("shown");
            LoggerFactory.getLogger("io.grpc.netty.shaded.io.netty.bootstrap.Bootstrap").warn("keepalive");
        } finally {
            System.setOut(stdout);
        }

        assertThat(out.size()).isZero();
        assertThat(lines()).singleElement().asString().matches(TIMESTAMP + " WARN  \\[.*\\] dev\\.fencing\\.test - shown");
    }

    @Test
    void badLevelsAndFormatsAreRejectedNamingTheFlag() {
        assertThatThrownBy(() -> LogLevels.parse(List.of("verbose")))
                .hasMessage("--log-level verbose: expected one of error|warn|info|debug|trace or logger=level");
        assertThatThrownBy(() -> LogLevels.parse(List.of("dev.fencing=loud")))
                .hasMessageStartingWith("--log-level dev.fencing=loud: expected one of");
        assertThatThrownBy(() -> LogLevels.parse(List.of("=debug")))
                .hasMessageStartingWith("--log-level =debug: expected a logger name");
        assertThatThrownBy(() -> LogFormat.parse("xml")).hasMessage("--log-format xml: expected text or json");
    }

    @Test
    void levelNamesAreCaseInsensitiveAndTheLastRootWins() {
        LogLevels levels = LogLevels.parse(List.of("DEBUG", "Warn", "io.grpc=Error"));

        assertThat(levels).isEqualTo(new LogLevels("warn", Map.of("io.grpc", "error")));
    }
}
