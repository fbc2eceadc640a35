package dev.fencing.e2e.peer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fencing.e2e.process.ObservedLine;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PeerSpecTest {

    @Test
    void rendersTheSharedCommandLineWithOptionalPartsOnlyWhenSet() {
        PeerSpec plain = PeerSpec.of("a", "127.0.0.1", 7001);
        assertThat(plain.arguments()).containsExactly("--name", "a", "--bind", "127.0.0.1", "--port", "7001",
                "--config", "local");

        PeerSpec full = plain.joining(List.of("127.0.0.1:7000", "127.0.0.1:7002")).withKey("a2V5")
                .withState("s").withConfig("lan").withExtraArgs(List.of("--probe-interval", "500ms"));
        assertThat(full.arguments()).containsExactly("--name", "a", "--bind", "127.0.0.1", "--port", "7001",
                "--config", "lan", "--join", "127.0.0.1:7000,127.0.0.1:7002", "--key", "a2V5", "--state", "s",
                "--probe-interval", "500ms");
        assertThat(full.address()).isEqualTo("127.0.0.1:7001");
    }

    @Test
    void membersLinesAreReadWithNamesOrObjects() throws Exception {
        ObjectMapper json = new ObjectMapper();
        ObservedLine line = new ObservedLine(0, 0, json.readTree(
                "{\"ts\":5,\"event\":\"members\",\"alive\":[\"b\",\"a\"],\"suspect\":[{\"name\":\"c\"}],"
                        + "\"dead\":[\"d\"],\"left\":[]}"));

        MembersView view = MembersView.from(line);

        assertThat(view.ts()).isEqualTo(5);
        assertThat(view.alive()).isEqualTo(Set.of("a", "b"));
        assertThat(view.suspect()).isEqualTo(Set.of("c"));
        assertThat(view.dead()).isEqualTo(Set.of("d"));
        assertThat(view.notDead()).containsExactly("a", "b", "c");
    }
}
