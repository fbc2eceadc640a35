package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.helm.InstallGuide.Block;
import dev.fencing.helm.InstallGuide.Phase;
import dev.fencing.helm.InstallGuide.Transcript;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The marked shell blocks of the install guide: how they are found, split into commands and run with bash. */
class InstallGuideTest {

    @TempDir
    Path dir;

    @Test
    void onlyMarkedShellBlocksAreTakenWithContinuationLinesJoinedAndCommentsSkipped() {
        String md = """
                ```sh
                echo unmarked
                ```
                <!-- install-guide:run plain-cluster setup -->
                ```sh
                # a comment line
                A=1

                helm install x \\
                  --set a=b   # trailing comment
                ```
                <!-- install-guide:run deckhouse verify -->
                ```sh
                kubectl get nodes
                ```
                """;

        List<Block> blocks = InstallGuide.blocks(md);

        assertThat(blocks).containsExactly(
                new Block("plain-cluster", Phase.SETUP, 4, List.of("A=1", "helm install x \\\n  --set a=b   # trailing comment")),
                new Block("deckhouse", Phase.VERIFY, 12, List.of("kubectl get nodes")));
    }

    @Test
    void aMarkerWithoutAShellBlockOrWithAnUnknownPhaseOrAnUnendedBlockIsAnErrorNamingTheLine() {
        assertThatThrownBy(() -> InstallGuide.blocks("text\n<!-- install-guide:run plain-cluster setup -->\n\n```sh\n"
                + "ls\n```\n")).hasMessageContaining("line 2: the marker must be followed by a ```sh block");
        assertThatThrownBy(() -> InstallGuide.blocks("<!-- install-guide:run plain-cluster later -->\n```sh\nls\n```"))
                .hasMessageContaining("line 1: unknown phase 'later'");
        assertThatThrownBy(() -> InstallGuide.blocks("<!-- install-guide:run -->\n```sh\nls\n```"))
                .hasMessageContaining("line 1: malformed marker");
        assertThatThrownBy(() -> InstallGuide.blocks("<!-- install-guide:run p setup -->\n```sh\nls \\\n```"))
                .hasMessageContaining("line 1: the marked block does not end");
        assertThatThrownBy(() -> InstallGuide.blocks("<!-- install-guide:run p setup -->\n```sh\nls\n"))
                .hasMessageContaining("line 1: the marked block does not end");
    }

    @Test
    void theGuidesPlainClusterPathInstallsWithDefaultValuesExceptTheCrdAndHasEveryPhase() throws Exception {
        List<Block> blocks = InstallGuide.blocks(Files.readString(InstallGuide.file())).stream()
                .filter(b -> b.path().equals("plain-cluster")).toList();

        assertThat(blocks).extracting(Block::phase).contains(Phase.SETUP, Phase.VERIFY, Phase.UNINSTALL);
        List<String> commands = blocks.stream().flatMap(b -> b.commands().stream()).toList();
        assertThat(commands.stream().filter(c -> c.startsWith("helm install")))
                .containsExactly("helm install fencing helm/fencing -n \"$NS\" --set crds.install=true");
        assertThat(commands).contains("kubectl apply -f api/examples/nodegroup-fencing.yaml",
                "helm uninstall fencing -n \"$NS\"");
    }

    @Test
    void theScriptPrintsEachCommandRunsThePhasesInOrderAndStopsAtTheFirstFailure() throws Exception {
        List<Block> blocks = List.of(
                new Block("p", Phase.VERIFY, 9, List.of("echo \"it's $X\"", "false", "echo never")),
                new Block("p", Phase.SETUP, 1, List.of("X=set", "printf 'a\\n' \\\n  | tr a b")),
                new Block("other", Phase.SETUP, 5, List.of("echo other path")));
        List<Phase> seen = new ArrayList<>();

        Transcript t = InstallGuide.run(InstallGuide.script(blocks, "p"), dir, Map.of("PATH", "/usr/bin:/bin"),
                Duration.ofSeconds(30), seen::add);

        assertThat(seen).containsExactly(Phase.SETUP, Phase.VERIFY);
        assertThat(t.lines()).containsExactly("$ X=set", "$ printf 'a\\n' \\", "  | tr a b", "b",
                "$ echo \"it's $X\"", "it's set", "$ false");
        assertThat(t.exitCode()).isEqualTo(1);
    }

    @Test
    void anUnsetVariableFailsTheScriptAndAHangingCommandIsEndedAtTheTimeout() throws Exception {
        Transcript unset = InstallGuide.run(InstallGuide.script(List.of(new Block("p", Phase.SETUP, 1,
                List.of("echo \"$REGISTRY/x\""))), "p"), dir, Map.of("PATH", "/usr/bin:/bin"),
                Duration.ofSeconds(30), p -> { });
        assertThat(unset.exitCode()).isNotZero();
        assertThat(unset.text()).contains("REGISTRY: unbound variable");

        Transcript hanging = InstallGuide.run(InstallGuide.script(List.of(new Block("p", Phase.SETUP, 1,
                List.of("sleep 600"))), "p"), dir, Map.of("PATH", "/usr/bin:/bin"), Duration.ofSeconds(2), p -> { });
        assertThat(hanging.exitCode()).isEqualTo(-1);
        assertThat(hanging.lines()).last().asString().contains("still running after PT2S; ended");
    }
}
