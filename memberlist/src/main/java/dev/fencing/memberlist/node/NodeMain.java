package dev.fencing.memberlist.node;

import dev.fencing.memberlist.Delegate;
import dev.fencing.memberlist.EventDelegate;
import dev.fencing.memberlist.Memberlist;
import dev.fencing.memberlist.Node;
import dev.fencing.memberlist.NodeState;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A memberlist node for people and for interop tests: joins, prints membership as JSON lines on stdout, sends user
 * messages read as JSON lines from stdin, and leaves gracefully on SIGTERM. The line protocol is in the module README.
 */
public final class NodeMain {
  private final NodeOptions options;
  private final PrintStream out;
  private final InstantSource wallClock = InstantSource.system();
  private static final int MAX_BROADCASTS = 36 * 36;
  private final AtomicReference<byte[]> meta;
  private final AtomicReference<byte[]> state;
  /** User broadcasts queued by the "broadcasts" command, handed out once each by getBroadcasts. */
  private final ConcurrentLinkedQueue<byte[]> queued = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean stopping = new AtomicBoolean();
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final ScheduledExecutorService ticker =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "node-ticker");
            t.setDaemon(true);
            return t;
          });
  private Memberlist memberlist;

  private NodeMain(NodeOptions options, PrintStream out) {
    this.options = options;
    this.out = out;
    this.meta = new AtomicReference<>(options.meta().getBytes(StandardCharsets.UTF_8));
    this.state = new AtomicReference<>(options.state().getBytes(StandardCharsets.UTF_8));
  }

  public static void main(String[] args) {
    NodeOptions options;
    try {
      options = NodeOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      System.err.println(NodeOptions.USAGE);
      System.exit(2);
      return;
    }
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    NodeMain node = new NodeMain(options, out);
    try {
      node.run();
    } catch (IOException e) {
      node.emit(node.event("error").string("error", "cannot start: " + e.getMessage()));
      System.exit(1);
    }
  }

  private void run() throws IOException {
    memberlist =
        Memberlist.create(
            options.config().toBuilder().delegate(new NodeDelegate()).events(new NodeEvents()).build());
    Node self = memberlist.localNode();
    emit(event("ready").string("node", self.name()).string("addr", self.hostPort()));
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  leaveAndStop();
                  out.flush();
                  // A JVM ended by SIGTERM exits with 143; the contract is 0 after a graceful leave.
                  Runtime.getRuntime().halt(0);
                },
                "node-shutdown"));
    ticker.scheduleAtFixedRate(this::printMembers, 1, 1, TimeUnit.SECONDS);
    if (!options.join().isEmpty()) {
      ticker.execute(this::joinUntilSuccess);
    }
    Thread stdin = new Thread(this::readCommands, "node-stdin");
    stdin.setDaemon(true);
    stdin.start();
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    System.exit(0);
  }

  private void joinUntilSuccess() {
    if (stopping.get()) {
      return;
    }
    try {
      int contacted = memberlist.join(options.join());
      emit(event("joined").number("contacted", contacted));
    } catch (IOException | RuntimeException e) {
      emit(event("error").string("error", "join: " + e.getMessage()));
      ticker.schedule(this::joinUntilSuccess, 1, TimeUnit.SECONDS);
    }
  }

  private void leaveAndStop() {
    if (!stopping.compareAndSet(false, true)) {
      return;
    }
    ticker.shutdownNow();
    try {
      memberlist.leave(options.leaveTimeout());
    } catch (RuntimeException e) {
      emit(event("error").string("error", "leave: " + e.getMessage()));
    }
    memberlist.shutdown();
    emit(event("shutdown").string("node", options.config().name()));
    stopped.countDown();
  }

  private void printMembers() {
    List<String> alive = new ArrayList<>();
    List<String> suspect = new ArrayList<>();
    List<String> dead = new ArrayList<>();
    List<String> left = new ArrayList<>();
    for (Node n : memberlist.allNodes()) {
      switch (n.state()) {
        case ALIVE -> alive.add(n.name());
        case SUSPECT -> suspect.add(n.name());
        case DEAD -> dead.add(n.name());
        case LEFT -> left.add(n.name());
      }
    }
    alive.sort(null);
    suspect.sort(null);
    dead.sort(null);
    left.sort(null);
    emit(event("members").strings("alive", alive).strings("suspect", suspect).strings("dead", dead).strings("left", left));
  }

  private void readCommands() {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try {
      String line;
      while ((line = in.readLine()) != null) {
        if (!line.isBlank()) {
          command(line);
        }
      }
    } catch (IOException e) {
      emit(event("error").string("error", "stdin: " + e.getMessage()));
    }
  }

  private void command(String line) {
    Map<String, String> cmd;
    try {
      cmd = JsonLine.parse(line);
    } catch (IllegalArgumentException e) {
      emit(event("error").string("error", "bad command: " + e.getMessage()));
      return;
    }
    try {
      if (cmd.containsKey("send")) {
        send(cmd.get("send"), cmd.getOrDefault("msg", ""), "true".equals(cmd.get("reliable")));
      } else if (cmd.containsKey("sendto")) {
        memberlist.sendToAddress(parseAddress(cmd.get("sendto")), utf8(cmd.getOrDefault("msg", "")));
        emit(event("sent").string("to", cmd.get("sendto")).bool("reliable", false));
      } else if (cmd.containsKey("meta")) {
        meta.set(utf8(cmd.get("meta")));
        memberlist.updateNode(options.leaveTimeout());
      } else if (cmd.containsKey("state")) {
        state.set(utf8(cmd.get("state")));
      } else if (cmd.containsKey("broadcasts")) {
        queueBroadcasts(cmd.get("broadcasts"));
      } else if ("true".equals(cmd.get("leave"))) {
        leaveAndStop();
      } else {
        emit(event("error").string("error", "unknown command (expected send, sendto, meta, state, broadcasts or leave): " + line));
      }
    } catch (IOException | RuntimeException e) {
      emit(event("error").string("error", e.getMessage() == null ? e.toString() : e.getMessage()));
    }
  }

  /**
   * Queues {@code count} distinct 2-character user broadcasts ("00", "01", … in base 36): small enough that one
   * gossip packet holds more than 255 of them, which memberlist must split into several compounds.
   */
  private void queueBroadcasts(String count) {
    int n;
    try {
      n = Integer.parseInt(count);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("broadcasts must be a count, not " + count, e);
    }
    if (n < 1 || n > MAX_BROADCASTS) {
      throw new IllegalArgumentException("broadcasts must be 1.." + MAX_BROADCASTS + ", not " + n);
    }
    for (int i = 0; i < n; i++) {
      String text = Integer.toString(i, 36);
      queued.add(utf8(text.length() == 1 ? "0" + text : text));
    }
  }

  private void send(String to, String msg, boolean reliable) throws IOException {
    Node target = null;
    for (Node n : memberlist.members()) {
      if (n.name().equals(to)) {
        target = n;
      }
    }
    if (target == null) {
      emit(event("error").string("error", "unknown member " + to));
      return;
    }
    if (reliable) {
      memberlist.sendReliable(target, utf8(msg));
    } else {
      memberlist.sendBestEffort(target, utf8(msg));
    }
    emit(event("sent").string("to", to).bool("reliable", reliable));
  }

  private static InetSocketAddress parseAddress(String hostPort) throws IOException {
    int colon = hostPort.lastIndexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException("sendto needs host:port, got " + hostPort);
    }
    String host = hostPort.substring(0, colon).replace("[", "").replace("]", "");
    int port;
    try {
      port = Integer.parseInt(hostPort.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("bad port in " + hostPort);
    }
    return new InetSocketAddress(InetAddress.getByName(host), port);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private JsonLine event(String name) {
    return JsonLine.event(wallClock.millis(), name);
  }

  private void emit(JsonLine line) {
    synchronized (out) {
      out.println(line);
    }
  }

  private JsonLine nodeEvent(String name, Node n) {
    return event(name).string("node", n.name()).string("addr", n.hostPort());
  }

  /** The node's protocol versions as parsed from its alive message: "PMin,PMax,PCur,DMin,DMax,DCur". */
  private static String vsn(Node n) {
    return n.pMin() + "," + n.pMax() + "," + n.pCur() + "," + n.dMin() + "," + n.dMax() + "," + n.dCur();
  }

  /** Prints membership changes. */
  private final class NodeEvents implements EventDelegate {
    @Override
    public void notifyJoin(Node node) {
      emit(nodeEvent("join", node).string("meta", new String(node.meta(), StandardCharsets.UTF_8))
          .string("vsn", vsn(node)));
    }

    @Override
    public void notifyLeave(Node node) {
      emit(nodeEvent("leave", node).string("state", node.state() == NodeState.LEFT ? "left" : "dead"));
    }

    @Override
    public void notifyUpdate(Node node) {
      emit(nodeEvent("update", node).string("meta", new String(node.meta(), StandardCharsets.UTF_8))
          .string("vsn", vsn(node)));
    }
  }

  /** Supplies meta and push/pull state, prints user messages and merged remote state. */
  private final class NodeDelegate implements Delegate {
    @Override
    public byte[] nodeMeta(int limit) {
      return meta.get();
    }

    @Override
    public void notifyMsg(byte[] msg) {
      emit(event("user").string("msg", new String(msg, StandardCharsets.UTF_8)));
    }

    @Override
    public List<byte[]> getBroadcasts(int overhead, int limit) {
      List<byte[]> out = new ArrayList<>();
      int used = 0;
      for (byte[] next = queued.peek(); next != null && used + overhead + next.length <= limit; next = queued.peek()) {
        used += overhead + next.length;
        out.add(queued.poll());
      }
      return out;
    }

    @Override
    public byte[] localState(boolean join) {
      return state.get();
    }

    @Override
    public void mergeRemoteState(byte[] buf, boolean join) {
      emit(event("state").bool("join", join).string("state", new String(buf, StandardCharsets.UTF_8)));
    }
  }
}
