package dev.fencing.kubetest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A control plane inside a network namespace (as the lab runs it) is reached from the test JVM through the relay,
 * and from inside the namespace at its own address; closing it leaves no process behind.
 */
class NamespacedControlPlaneTest {

    private static final String ADDRESS = "198.18.250.2";

    @Test
    void runsInsideANamespaceAndIsReachedThroughTheRelay() throws IOException, InterruptedException {
        String ns = "fkt-" + ProcessHandle.current().pid();
        run("ip", "netns", "add", ns);
        try {
            run("ip", "-n", ns, "link", "set", "lo", "up");
            run("ip", "-n", ns, "addr", "add", ADDRESS + "/32", "dev", "lo");
            List<Long> pids;
            try (RealControlPlane plane = RealControlPlane.builder().name("netns").networkNamespace(ns, ADDRESS)
                    .start()) {
                assertThat(plane.url()).startsWith("https://127.0.0.1:");
                assertThat(plane.inClusterUrl()).isEqualTo("https://" + ADDRESS + ":6443");
                assertThat(plane.adminClient().namespaces().withName("kube-system").get()).isNotNull();
                pids = namespacePids(ns);
                assertThat(pids).isNotEmpty();
            }
            // killed processes are gone once reaped (by this JVM, or by init for a relay's forked children)
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                for (long pid : pids) {
                    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                            .as("pid %d of the closed control plane", pid).isFalse();
                }
                assertThat(namespacePids(ns)).as("processes left in %s", ns).isEmpty();
            });
        } finally {
            run("ip", "netns", "del", ns);
        }
    }

    private static List<Long> namespacePids(String ns) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("ip", "netns", "pids", ns).start();
        String out = new String(p.getInputStream().readAllBytes());
        p.waitFor(10, TimeUnit.SECONDS);
        return out.lines().filter(l -> !l.isBlank()).map(l -> Long.parseLong(l.strip())).toList();
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(15, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
        }
    }
}
