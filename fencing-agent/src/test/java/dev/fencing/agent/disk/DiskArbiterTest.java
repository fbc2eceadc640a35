package dev.fencing.agent.disk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fencing.agent.disk.DiskState.Phase;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The disk protocol on virtual time over one in-memory device shared by several arbiters. */
class DiskArbiterTest {

  private static final long MS = 1_000_000L;
  private static final DiskTiming TIMING = new DiskTiming(Duration.ofMillis(100), Duration.ofMillis(500));
  private static final SortedSet<String> ALL = set("a", "b", "c", "d");

  private final InMemoryBlockDevice device = new InMemoryBlockDevice(1 << 20, 512);
  private final SbdDevice sbd = new SbdDevice(device);
  private final SbdHeader header;

  DiskArbiterTest() throws IOException {
    header = new SbdHeader(255, 512, 5, 0, 1, 10, 1, new UUID(1, 2));
    device.write(1, new byte[(int) (header.layoutBytes() - 512)]);
    device.write(0, header.encode());
  }

  /** One node: its arbiter, its view and its tie request. */
  private final class Node {
    final String name;
    final DiskArbiter arbiter;
    LocalView view;
    Optional<DiskArbiter.TieRequest> request = Optional.empty();
    Optional<DiskArbiter.Write> pending = Optional.empty();

    Node(String name, LocalView view) {
      this.name = name;
      this.arbiter = new DiskArbiter(name, TIMING, "node=" + name);
      this.view = view;
    }

    void read(long now) throws Exception {
      pending = arbiter.onRead(now, now, sbd.readHeader(), sbd.readSlots(header, arbiter.slotsToRead(header)), view,
          request);
    }

    void write(long now) throws IOException {
      if (pending.isPresent()) {
        sbd.writeSlot(header, pending.get().slot(), pending.get().content());
        arbiter.onWritten(pending.get(), now, now);
        pending = Optional.empty();
      }
    }

    void cycle(long now) throws Exception {
      read(now);
      write(now);
    }

    boolean holds(long now) {
      DiskState.Tie tie = arbiter.state().tie();
      return tie.phase() == Phase.HELD && now - tie.validUntilNanos() < 0;
    }
  }

  private static SortedSet<String> set(String... names) {
    return new TreeSet<>(List.of(names));
  }

  private static LocalView healthy(SortedSet<String> heard) {
    return new LocalView(ALL, 3, true, 1, heard, heard);
  }

  private List<Node> nodes(String... names) throws Exception {
    List<Node> out = new ArrayList<>();
    for (String n : names) {
      out.add(new Node(n, healthy(ALL)));
    }
    // allocation: every node writes its name, then looks it up once the allocate timeout (0 here) has passed
    for (long t = 0; t < 5 * 100; t += 100) {
      for (Node n : out) {
        n.cycle(t * MS);
      }
    }
    return out;
  }

  @Test
  void racingAllocatorsEndInDistinctSlotsListedAsSbdDoes() throws Exception {
    Node a = new Node("a", healthy(ALL));
    Node b = new Node("b", healthy(ALL));
    // both see slot 0 free; b's write lands last and owns it; a finds it lost and takes the next free slot
    a.read(0);
    b.read(0);
    a.write(0);
    b.write(0);
    for (long t = 100; t <= 500; t += 100) {
      a.cycle(t * MS);
      b.cycle(t * MS);
    }
    assertEquals(1, a.arbiter.state().slot().getAsInt());
    assertEquals(0, b.arbiter.state().slot().getAsInt());
    var slots = sbd.readSlots(header, 3);
    assertEquals("b", slots.get(0).slot().name());
    assertEquals("a", slots.get(1).slot().name());
    assertTrue(slots.get(1).slot().view().orElseThrow().generation() > 0);
  }

  /**
   * The holder's whole process stalls (GC, SIGSTOP, a frozen VM) longer than its lease: the other half finds its slot
   * stale and wins. On resume the holder must not renew the lapsed lease (its disk thread may read and write before
   * anything else looks); it claims again and loses, so the two sides never both hold a valid lease.
   */
  @Test
  void aHolderThatStalledPastItsLeaseClaimsAgainAndLosesInsteadOfRenewing() throws Exception {
    List<Node> nodes = nodes("a", "b");
    Node a = nodes.get(0);
    Node b = nodes.get(1);
    for (Node n : nodes) {
      n.view = new LocalView(ALL, 3, true, 1, set(n.name), set(n.name));
    }
    long t = 600;
    for (; t <= 1500; t += 100) {
      a.request = Optional.of(new DiskArbiter.TieRequest(set("a", "c"), t * MS));
      b.request = Optional.of(new DiskArbiter.TieRequest(set("b", "d"), t * MS));
      a.cycle(t * MS);
      b.cycle(t * MS);
    }
    assertEquals(Phase.HELD, a.arbiter.state().tie().phase(), "the side holding the first name wins");
    assertEquals(Phase.LOST, b.arbiter.state().tie().phase());

    // a stalls for 2 s; b goes on and wins once a's slot is stale
    long resume = t + 2_000;
    for (; t < resume; t += 100) {
      b.request = Optional.of(new DiskArbiter.TieRequest(set("b", "d"), t * MS));
      b.cycle(t * MS);
    }
    assertTrue(b.holds(t * MS), "b won the stale holder's lease: " + b.arbiter.state().tie().reason());

    // a resumes: its disk thread completes one read and write first
    int both = 0;
    for (long u = t; u <= t + 3_000; u += 100) {
      a.request = Optional.of(new DiskArbiter.TieRequest(set("a", "c"), u * MS));
      b.request = Optional.of(new DiskArbiter.TieRequest(set("b", "d"), u * MS));
      a.cycle(u * MS);
      b.cycle(u * MS);
      if (a.holds(u * MS) && b.holds(u * MS)) {
        both++;
      }
    }
    assertEquals(0, both, "instants at which both sides held a valid lease");
    assertEquals(Phase.LOST, a.arbiter.state().tie().phase(), a.arbiter.state().tie().reason());
    assertTrue(b.holds((t + 3_000) * MS));
  }

  @Test
  void resetInTheMailboxIsAPoisonPillUntilCleared() throws Exception {
    Node a = nodes("a").get(0);
    int slot = a.arbiter.state().slot().getAsInt();

    sbd.writeMailbox(header, slot, SbdMailbox.of(SbdCommand.RESET, "controller"));
    a.cycle(600 * MS);
    assertEquals(Optional.of("reset from controller"), a.arbiter.state().poisonPill());

    device.failWith(new IOException("gone"));
    a.arbiter.fail(700 * MS, "gone");
    assertEquals(Optional.of("reset from controller"), a.arbiter.state().poisonPill(), "kept while unreadable");
    device.failWith(null);

    sbd.writeMailbox(header, slot, SbdMailbox.of(SbdCommand.TEST, "admin"));
    a.cycle(800 * MS);
    assertTrue(a.arbiter.state().poisonPill().isPresent(), "a test message does not clear a pill");

    sbd.writeMailbox(header, slot, SbdMailbox.of(SbdCommand.CLEAR, "admin"));
    a.cycle(900 * MS);
    assertEquals(Optional.empty(), a.arbiter.state().poisonPill());
  }

  @Test
  void offAndCrashdumpArePillsTestAndExitAreNot() throws Exception {
    Node a = nodes("a").get(0);
    int slot = a.arbiter.state().slot().getAsInt();
    long t = 600;
    for (SbdCommand c : SbdCommand.values()) {
      sbd.writeMailbox(header, slot, SbdMailbox.of(SbdCommand.CLEAR, "x"));
      a.cycle(t++ * MS);
      sbd.writeMailbox(header, slot, SbdMailbox.of(c, "x"));
      a.cycle(t++ * MS);
      assertEquals(c.isPoisonPill(), a.arbiter.state().poisonPill().isPresent(), c.name());
    }
    assertFalse(SbdCommand.TEST.isPoisonPill() || SbdCommand.EXIT.isPoisonPill());
  }

  @Test
  void aNodeTheQuorumNoLongerHearsLearnsItIsCutOff() throws Exception {
    List<Node> n = nodes("a", "b", "c", "d");
    Node d = n.get(3);
    assertTrue(d.arbiter.state().cutOff().isEmpty());
    for (Node other : n.subList(0, 3)) {
      other.view = healthy(set("a", "b", "c"));
    }
    d.view = new LocalView(ALL, 3, true, 1, ALL, set("d"));
    for (long t = 600; t <= 800; t += 100) {
      for (Node x : n) {
        x.cycle(t * MS);
      }
    }
    assertTrue(d.arbiter.state().cutOff().orElseThrow().contains("[a, b, c]"));
    assertTrue(n.get(0).arbiter.state().cutOff().isEmpty(), "the majority is not cut off");
  }

  @Test
  void peersThisNodeStillHearsAreNoEvidenceOfCutOff() throws Exception {
    List<Node> n = nodes("a", "b", "c", "d");
    Node d = n.get(3);
    for (Node other : n.subList(0, 3)) {
      other.view = healthy(set("a", "b", "c"));
    }
    // d was stalled: the others' bitmaps have not caught up, but d hears them (its inbox drained on resume)
    d.view = new LocalView(ALL, 3, true, 1, ALL, ALL);
    for (long t = 600; t <= 800; t += 100) {
      for (Node x : n) {
        x.cycle(t * MS);
      }
    }
    assertTrue(d.arbiter.state().cutOff().isEmpty());
  }

  @Test
  void staleSlotsAreNoEvidenceOfCutOff() throws Exception {
    List<Node> n = nodes("a", "b", "c", "d");
    for (Node other : n.subList(0, 3)) {
      other.view = healthy(set("a", "b", "c"));
      other.cycle(600 * MS);
    }
    Node d = n.get(3);
    // a, b and c stop writing (their disk path is gone): d reads unchanged generations
    for (long t = 700; t <= 1500; t += 100) {
      d.cycle(t * MS);
    }
    assertTrue(d.arbiter.state().cutOff().isEmpty());
  }

  @Test
  void inAnEvenSplitThePrioritisedSideHoldsTheLeaseAndTheOtherLoses() throws Exception {
    List<Node> n = nodes("a", "b", "c", "d");
    SortedSet<String> ab = set("a", "b");
    SortedSet<String> cd = set("c", "d");
    long t = 600;
    for (; t <= 1500; t += 100) {
      for (Node x : n) {
        x.request = Optional.of(new DiskArbiter.TieRequest(x.name.compareTo("c") < 0 ? ab : cd, t * MS));
        x.cycle(t * MS);
      }
    }
    long now = t * MS;
    assertTrue(n.get(0).holds(now - 100 * MS) && n.get(1).holds(now - 100 * MS));
    assertEquals(Phase.LOST, n.get(2).arbiter.state().tie().phase());
    assertEquals(Phase.LOST, n.get(3).arbiter.state().tie().phase());
  }

  @Test
  void theOtherSideWinsAfterTheClaimWaitWhenThePrioritisedSideIsGone() throws Exception {
    List<Node> n = nodes("a", "b", "c", "d");
    SortedSet<String> cd = set("c", "d");
    long won = -1;
    for (long t = 600; t <= 2000 && won < 0; t += 100) {
      for (Node x : n.subList(2, 4)) {
        x.request = Optional.of(new DiskArbiter.TieRequest(cd, t * MS));
        x.cycle(t * MS);
        if (x.holds(t * MS)) {
          won = t;
        }
      }
    }
    assertTrue(won >= 600 + TIMING.claimWaitNanos() / MS, "won at " + won);
  }

  @Test
  void theLeaseEndsWhenRenewalsStop() throws Exception {
    List<Node> n = nodes("a", "b");
    Node a = n.get(0);
    for (long t = 600; t <= 1000; t += 100) {
      a.request = Optional.of(new DiskArbiter.TieRequest(set("a", "b"), t * MS));
      a.cycle(t * MS);
    }
    assertTrue(a.holds(1000 * MS));
    long lastWrite = 1000 * MS;
    assertFalse(a.holds(lastWrite + TIMING.leaseNanos()), "no write renewed it");
  }

  /**
   * Random interleavings of reads and writes with random I/O latencies, request start times and stalled nodes:
   * never do two disjoint sides hold a valid lease at the same instant.
   */
  @Test
  void neverTwoDisjointSidesHoldTheLeaseUnderRandomInterleavings() throws Exception {
    for (long seed = 1; seed <= 500; seed++) {
      runRandomSplit(seed);
    }
  }

  private void runRandomSplit(long seed) throws Exception {
    InMemoryBlockDevice dev = new InMemoryBlockDevice(1 << 20, 512);
    SbdDevice disk = new SbdDevice(dev);
    dev.write(1, new byte[(int) (header.layoutBytes() - 512)]);
    dev.write(0, header.encode());
    Random random = new Random(seed);
    String[] names = {"a", "b", "c", "d"};
    Map<String, DiskArbiter> arbiters = new HashMap<>();
    Map<String, Optional<DiskArbiter.Write>> pending = new HashMap<>();
    Map<String, Long> nextAt = new HashMap<>();
    Map<String, Long> requestFrom = new HashMap<>();
    Map<String, Long> stalledUntil = new HashMap<>();
    for (int i = 0; i < 4; i++) {
      String name = names[i];
      arbiters.put(name, new DiskArbiter(name, TIMING, "seed=" + seed));
      pending.put(name, Optional.empty());
      nextAt.put(name, (long) random.nextInt(100));
      requestFrom.put(name, 600L + random.nextInt(800));
      stalledUntil.put(name, random.nextInt(4) == 0 ? 900L + random.nextInt(1500) : 0L);
    }
    // allocate distinct slots first (no race: the race is covered above)
    for (String name : names) {
      DiskArbiter a = arbiters.get(name);
      Optional<DiskArbiter.Write> w = a.onRead(0, 0, header, disk.readSlots(header, 255), LocalView.none(),
          Optional.empty());
      disk.writeSlot(header, w.orElseThrow().slot(), w.get().content());
      a.onWritten(w.get(), 0, 0);
    }
    for (long now = 1; now < 4000; now++) {
      for (String name : names) {
        if (now < nextAt.get(name) || now < stalledUntil.get(name)) {
          continue;
        }
        DiskArbiter a = arbiters.get(name);
        SortedSet<String> side = name.compareTo("c") < 0 ? set("a", "b") : set("c", "d");
        Optional<DiskArbiter.TieRequest> request = now >= requestFrom.get(name)
            ? Optional.of(new DiskArbiter.TieRequest(side, now * MS)) : Optional.empty();
        if (pending.get(name).isEmpty()) {
          long readEnd = now + random.nextInt(30);
          pending.put(name, a.onRead(now * MS, readEnd * MS, header, disk.readSlots(header, 8),
              healthy(ALL), request));
          nextAt.put(name, readEnd + 1 + random.nextInt(80));
          if (pending.get(name).isEmpty()) {
            nextAt.put(name, now + 100);
          }
        } else {
          DiskArbiter.Write w = pending.get(name).get();
          long writeEnd = now + random.nextInt(30);
          disk.writeSlot(header, w.slot(), w.content());
          a.onWritten(w, now * MS, writeEnd * MS);
          pending.put(name, Optional.empty());
          nextAt.put(name, writeEnd + 60 + random.nextInt(60));
        }
      }
      boolean abHolds = holds(arbiters.get("a"), now) || holds(arbiters.get("b"), now);
      boolean cdHolds = holds(arbiters.get("c"), now) || holds(arbiters.get("d"), now);
      assertFalse(abHolds && cdHolds, "seed " + seed + ": both sides hold the lease at " + now + "ms");
    }
    boolean anyone = false;
    for (String name : names) {
      anyone |= arbiters.get(name).state().tie().phase() == Phase.HELD;
    }
    assertTrue(anyone, "seed " + seed + ": nobody won the tie");
  }

  private static boolean holds(DiskArbiter a, long nowMs) {
    DiskState.Tie tie = a.state().tie();
    return tie.phase() == Phase.HELD && nowMs * MS - tie.validUntilNanos() < 0;
  }

  @Test
  void garbageInAnotherSlotDoesNotStopThisNode() throws Exception {
    List<Node> n = nodes("a", "b");
    byte[] junk = new byte[512];
    new Random(7).nextBytes(junk);
    junk[0] = 1;
    System.arraycopy("FADV".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0, junk, SlotView.OFFSET, 4);
    int bSlot = n.get(1).arbiter.state().slot().getAsInt();
    device.write(header.slotSector(bSlot), junk);
    device.write(header.mailboxSector(bSlot), junk);
    n.get(0).cycle(600 * MS);
    assertTrue(n.get(0).arbiter.state().problem().isEmpty());
    assertNotEquals(-1, n.get(0).arbiter.state().slot().orElse(-1));
  }
}
