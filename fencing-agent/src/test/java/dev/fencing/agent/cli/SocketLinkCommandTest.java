package dev.fencing.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code socket-link} in a temp dir standing for the host's {@code /var/run}. */
class SocketLinkCommandTest {

  private static final Path TARGET = Path.of("fencing-agent/fencing-agent.sock");

  @TempDir Path run;

  private CliRun socketLink(Path link, String target) {
    return CliRun.of("socket-link", "--link", link.toString(), "--target", target);
  }

  private Path link() {
    return run.resolve("fencing-agent.sock");
  }

  private void assertLinked() throws Exception {
    assertThat(Files.isSymbolicLink(link())).isTrue();
    assertThat(Files.readSymbolicLink(link())).isEqualTo(TARGET);
    try (var entries = Files.list(run)) {
      assertThat(entries.map(p -> p.getFileName().toString())).as("no temp symlink left behind")
          .doesNotContain(".fencing-agent.sock.tmp-" + ProcessHandle.current().pid());
    }
  }

  @Test
  void createsARelativeSymlinkThatResolvesToTheSocketInTheDirectory() throws Exception {
    Files.createDirectories(run.resolve("fencing-agent"));
    Files.writeString(run.resolve(TARGET), "stand-in for the socket");

    CliRun result = socketLink(link(), TARGET.toString());

    assertThat(result.code()).isZero();
    assertThat(result.out()).contains("created");
    assertLinked();
    assertThat(Files.readString(link())).isEqualTo("stand-in for the socket");
  }

  @Test
  void runningItAgainChangesNothing() throws Exception {
    socketLink(link(), TARGET.toString());
    Object before = Files.readAttributes(link(), java.nio.file.attribute.BasicFileAttributes.class,
        LinkOption.NOFOLLOW_LINKS).fileKey();

    CliRun again = socketLink(link(), TARGET.toString());

    assertThat(again.code()).isZero();
    assertThat(again.out()).contains("already in place");
    assertThat(Files.readAttributes(link(), java.nio.file.attribute.BasicFileAttributes.class,
        LinkOption.NOFOLLOW_LINKS).fileKey()).as("the same inode").isEqualTo(before);
    assertLinked();
  }

  @Test
  void aSymlinkPointingElsewhereIsReplaced() throws Exception {
    Files.createSymbolicLink(link(), Path.of("old-agent/agent.sock"));

    CliRun result = socketLink(link(), TARGET.toString());

    assertThat(result.code()).isZero();
    assertThat(result.out()).contains("replaced the symlink to old-agent/agent.sock");
    assertLinked();
  }

  @Test
  void aStaleSocketIsReplaced() throws Exception {
    // A socket file left by an agent that mounted all of /var/run: bound, then the server went away.
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(link()));
    }
    assertThat(Files.exists(link(), LinkOption.NOFOLLOW_LINKS)).isTrue();

    CliRun result = socketLink(link(), TARGET.toString());

    assertThat(result.code()).isZero();
    assertThat(result.out()).contains("replaced a stale socket");
    assertLinked();
  }

  @Test
  void aDirectoryOrRegularFileInTheWayIsLeftAloneWithAMessageAndExitZero() throws Exception {
    Files.createDirectories(link());
    CliRun directory = socketLink(link(), TARGET.toString());
    assertThat(directory.code()).isZero();
    assertThat(directory.err()).contains("is a directory").contains("left alone").contains("mount that directory");
    assertThat(Files.isDirectory(link(), LinkOption.NOFOLLOW_LINKS)).isTrue();

    Path file = run.resolve("other.sock");
    Files.writeString(file, "not a socket");
    CliRun regular = socketLink(file, TARGET.toString());
    assertThat(regular.code()).isZero();
    assertThat(regular.err()).contains("is a regular file");
    assertThat(Files.readString(file)).isEqualTo("not a socket");
  }

  @Test
  void aMissingDirectoryIsAnIoErrorAndAnAbsoluteTargetAUsageError() {
    CliRun missing = socketLink(run.resolve("no-such-dir/fencing-agent.sock"), TARGET.toString());
    assertThat(missing.code()).isEqualTo(ExitCodes.AGENT_ERROR);
    assertThat(missing.err()).contains("cannot link");

    CliRun absolute = socketLink(link(), "/var/run/fencing-agent/fencing-agent.sock");
    assertThat(absolute.code()).isEqualTo(ExitCodes.USAGE);
    assertThat(absolute.err()).contains("must be relative");
    assertThat(Files.exists(link(), LinkOption.NOFOLLOW_LINKS)).isFalse();
  }
}
