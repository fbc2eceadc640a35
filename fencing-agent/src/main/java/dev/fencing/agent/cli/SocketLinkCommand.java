package dev.fencing.agent.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code fencing-agent socket-link}: keeps the contract path of the local API ({@code /var/run/fencing-agent.sock})
 * as a relative symlink into the socket directory the DaemonSet mounts. Run by the agent pod's init container with
 * the host's {@code /var/run} mounted elsewhere, hence a relative target: it must resolve on the host.
 *
 * <p>Idempotent: a symlink already pointing at the target is left alone; nothing there, a stale socket or a symlink
 * pointing elsewhere is replaced atomically (a temp symlink renamed over it, so a client never sees the path
 * missing). A directory, regular file or other special file in the way is never touched: the command says so and
 * exits 0, because the agent works through the directory path anyway and must not be kept from starting.
 */
@Command(name = "socket-link", mixinStandardHelpOptions = true,
    description = {"Point the local API's contract path at the agent's socket with a relative symlink (init"
        + " container).", "Example: socket-link --link /host/var/run/fencing-agent.sock --target"
        + " fencing-agent/fencing-agent.sock"},
    exitCodeListHeading = "Exit codes:%n",
    exitCodeList = {"0:the link is in place, or something that is not a socket or symlink is in the way (left"
        + " alone, message on stderr)", "1:an unexpected I/O error (e.g. the link's directory is missing or"
        + " read-only)", "2:invalid command line (e.g. an absolute --target)"})
public final class SocketLinkCommand implements Callable<Integer> {

  /** The file type bits of {@code unix:mode}, and the socket type. */
  private static final int S_IFMT = 0170000;
  private static final int S_IFSOCK = 0140000;

  @Spec CommandSpec spec;

  @Option(names = "--link", required = true, paramLabel = "PATH",
      description = "the symlink to keep, e.g. /host/var/run/fencing-agent.sock")
  Path link;

  @Option(names = "--target", required = true, paramLabel = "RELATIVE_TARGET",
      description = "where it points, relative to the link's directory, e.g. fencing-agent/fencing-agent.sock")
  Path target;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (target.isAbsolute()) {
      err.println("socket-link: --target " + target + " must be relative to the link's directory (the link is"
          + " created through a mount of the host's directory, where an absolute target would point elsewhere)");
      return ExitCodes.USAGE;
    }
    try {
      String done = ensure(link, target);
      out.println("socket-link: " + link + " -> " + target + ": " + done);
      return ExitCodes.OK;
    } catch (InTheWay e) {
      err.println("socket-link: " + link + " is " + e.getMessage() + ", not a socket or symlink: left alone. The"
          + " agent still serves its socket in the directory of " + target + "; consumers should mount that"
          + " directory rather than the socket path.");
      return ExitCodes.OK;
    } catch (IOException e) {
      err.println("socket-link: cannot link " + link + " -> " + target + ": " + e);
      return ExitCodes.AGENT_ERROR;
    }
  }

  /** Something at the link's path that is neither a socket nor a symlink; its message names what it is. */
  static final class InTheWay extends Exception {
    private static final long serialVersionUID = 1L;

    InTheWay(String what) {
      super(what, null, false, false);
    }
  }

  /**
   * Makes {@code link} a symlink to {@code target}.
   *
   * @return what was done, for the one line of output
   * @throws InTheWay when a directory, regular file or other special file is at {@code link}
   * @throws IOException on any unexpected I/O error
   */
  static String ensure(Path link, Path target) throws IOException, InTheWay {
    String replacing;
    BasicFileAttributes attributes;
    try {
      attributes = Files.readAttributes(link, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException e) {
      attributes = null;
    }
    if (attributes == null) {
      replacing = "created";
    } else if (attributes.isSymbolicLink()) {
      Path current = Files.readSymbolicLink(link);
      if (current.equals(target)) {
        return "already in place";
      }
      replacing = "replaced the symlink to " + current;
    } else if (attributes.isDirectory()) {
      throw new InTheWay("a directory");
    } else if (attributes.isRegularFile()) {
      throw new InTheWay("a regular file");
    } else if (isSocket(link)) {
      replacing = "replaced a stale socket";
    } else {
      throw new InTheWay("a special file (FIFO or device)");
    }
    Path temp = link.resolveSibling("." + link.getFileName() + ".tmp-" + ProcessHandle.current().pid());
    Files.deleteIfExists(temp);
    Files.createSymbolicLink(temp, target);
    try {
      // rename(2) replaces the old entry in one step: the path never goes missing for a client.
      Files.move(temp, link, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      throw new IOException("the file system cannot rename atomically: " + e.getMessage(), e);
    } finally {
      Files.deleteIfExists(temp);
    }
    return replacing;
  }

  private static boolean isSocket(Path path) throws IOException {
    Object mode = Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
    return mode instanceof Integer m && (m & S_IFMT) == S_IFSOCK;
  }
}
